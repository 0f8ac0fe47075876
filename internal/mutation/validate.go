package mutation

import (
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// The ids of Validate's findings. They are stable: feedback, logs and
// tests name them.
const (
	// RuleRequirementUnmarked (warn): a requirement of task.md has no
	// change marker of the task in the plan.
	RuleRequirementUnmarked = "requirement-unmarked"
	// RuleSectionRemovedUnmarked (fail): a section of the plan at task
	// start is gone and no [REMOVE] marker of the task accounts for it.
	RuleSectionRemovedUnmarked = "section-removed-unmarked"
	// RuleNoTaskMarkers (warn): task.md lists no requirement yet and the
	// plan has no change marker of the task, so nothing scopes the build.
	RuleNoTaskMarkers = "no-task-markers"
)

// taskMarker is a change marker of the task and what it is about.
type taskMarker struct {
	m     plan.Marker
	node  *plan.Node
	words map[string]bool
}

// changeKind reports whether k is one of the TASK-N change kinds.
func changeKind(k plan.MarkerKind) bool {
	return k == plan.Add || k == plan.Modify || k == plan.Fix || k == plan.Remove
}

// markerKind maps a requirement's kind to the marker that carries it; ok
// is false for an unclassified requirement, which any change marker may
// carry.
func markerKind(k task.Kind) (plan.MarkerKind, bool) {
	switch k {
	case task.Add:
		return plan.Add, true
	case task.Modify:
		return plan.Modify, true
	case task.Fix:
		return plan.Fix, true
	case task.Remove:
		return plan.Remove, true
	}
	return 0, false
}

// taskMarkers returns the change markers of task n in root, in document
// order, each with the keywords of its text and of the element it is on.
func taskMarkers(root *plan.Node, n int, targets []Target) []taskMarker {
	byNode := make(map[*plan.Node]Target, len(targets))
	for _, t := range targets {
		byNode[t.Node] = t
	}
	var out []taskMarker
	root.Walk(func(node *plan.Node) bool {
		for _, m := range node.Markers {
			if m.Task != n || !changeKind(m.Kind) {
				continue
			}
			words := keywords(m.Text)
			if t, ok := byNode[node]; ok {
				for w := range t.words {
					words[w] = true
				}
			} else {
				for w := range keywords(append(stringProps(node), node.Component)...) {
					words[w] = true
				}
			}
			out = append(out, taskMarker{m: m, node: node, words: words})
		}
		return true
	})
	return out
}

// Validate checks a mutation plan for task n beyond plan.Validate. current
// is the plan now; previous is the plan when the task started (the plan in
// the task-n-pre snapshot, see PreviousPlan), or nil when there was none.
//
//   - requirement-unmarked (warn): a requirement of task.md maps to no
//     change marker of task n. A marker carries a requirement when it has
//     the requirement's kind ([ADD] for an ADD, any kind for an
//     unclassified one) and shares a word with it, counting the words of
//     the element the marker is on; the only requirement of its kind is
//     carried by any marker of that kind.
//   - section-removed-unmarked (fail): a section of previous, identified by
//     its source file, is gone from current, and no [REMOVE] marker of
//     task n names it (by its gumdrop, title, file or screen) or sits on
//     its screen.
//   - no-task-markers (warn): task.md has no requirement yet and the plan
//     has no change marker of task n.
//
// Findings carry the line in current of the element they are about, when
// there is one.
func Validate(current, previous *plan.Node, t task.Task, n int) plan.Result {
	var res plan.Result
	if current == nil {
		return res
	}
	targets := Targets(current)
	marks := taskMarkers(current, n, targets)

	var reqs []task.Requirement
	perKind := map[task.Kind]int{}
	for _, r := range t.Requirements {
		if concrete(r) {
			reqs = append(reqs, r)
			perKind[r.Kind]++
		}
	}
	if len(reqs) == 0 && len(marks) == 0 {
		res.Warnings = append(res.Warnings, plan.Finding{
			ID: RuleNoTaskMarkers,
			Message: fmt.Sprintf("the plan has no change marker for task %d and task.md lists no requirement: "+
				"write the task's requirements in task.md and mark each change in the plan with {/* TASK-%d [ADD]: … */}, [MODIFY], [FIX] or [REMOVE], "+
				"so the harness can check the build stays in scope", n, n),
		})
	}
	for _, r := range reqs {
		if carried(r, marks, perKind[r.Kind]) {
			continue
		}
		res.Warnings = append(res.Warnings, unmarked(r, targets, t.AffectedFiles, n))
	}
	if previous != nil {
		res.Failures = append(res.Failures, removed(current, previous, marks, n)...)
	}
	return res
}

// carried reports whether some marker carries requirement r; alone says
// how many requirements share r's kind.
func carried(r task.Requirement, marks []taskMarker, alone int) bool {
	_, ok := carrier(r, marks, alone)
	return ok
}

// carrier returns the marker that carries requirement r: the first of its
// kind sharing a word with it, else, when r is the only requirement of its
// kind, the first marker of that kind.
func carrier(r task.Requirement, marks []taskMarker, alone int) (taskMarker, bool) {
	kind, classified := markerKind(r.Kind)
	words := keywords(r.Text)
	var first *taskMarker
	for i, m := range marks {
		if classified && m.m.Kind != kind {
			continue
		}
		if first == nil {
			first = &marks[i]
		}
		if len(overlap(words, m.words)) > 0 {
			return m, true
		}
	}
	if first != nil && classified && alone == 1 {
		return *first, true
	}
	return taskMarker{}, false
}

// requirementString renders r as task.md writes it.
func requirementString(r task.Requirement) string {
	if r.Kind == task.Open {
		return "[ ] " + r.Text
	}
	return "[" + string(r.Kind) + "] " + r.Text
}

func unmarked(r task.Requirement, targets []Target, affected []string, n int) plan.Finding {
	kind := "[MODIFY]"
	which := fmt.Sprintf("TASK-%d", n)
	if k, ok := markerKind(r.Kind); ok {
		kind = "[" + k.String() + "]"
		which += " " + kind
	}
	f := plan.Finding{ID: RuleRequirementUnmarked}
	example := fmt.Sprintf("{/* TASK-%d %s: %s */}", n, kind, oneLine(r.Text))
	m := match(r, targets, affected)
	if len(m.Targets) == 0 {
		f.Message = fmt.Sprintf("requirement %q of task.md has no %s marker in the plan: add %s to the <Section> it changes, or a new <Section> with that marker if no section fits",
			requirementString(r), which, example)
		return f
	}
	names := make([]string, len(m.Targets))
	for i, t := range m.Targets {
		names[i] = t.String()
	}
	f.Line, f.Col = m.Targets[0].Node.Line, m.Targets[0].Node.Col
	f.Message = fmt.Sprintf("requirement %q of task.md has no %s marker in the plan: add %s to the element it changes (most likely %s)",
		requirementString(r), which, example, strings.Join(names, "; "))
	return f
}

// oneLine shortens s to one line of at most 60 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// sectionKey identifies a section across two versions of a plan: its
// source file, else its screen and label.
func sectionKey(t Target) string {
	if t.File != "" {
		return t.File
	}
	return t.Screen + "\x00" + t.Label
}

// removed returns a failure for each section of previous that current lost
// without a [REMOVE] marker of task n accounting for it.
func removed(current, previous *plan.Node, marks []taskMarker, n int) []plan.Finding {
	have := map[string]int{}
	for _, t := range Targets(current) {
		if t.screenNode != nil {
			have[sectionKey(t)]++
		}
	}
	screens := map[string]*plan.Node{}
	for _, s := range plan.Collect(current, "Screen") {
		if name := s.Str("name"); name != "" {
			if _, dup := screens[name]; !dup {
				screens[name] = s
			}
		}
	}
	var out []plan.Finding
	for _, t := range Targets(previous) {
		if t.screenNode == nil {
			continue
		}
		if k := sectionKey(t); have[k] > 0 {
			have[k]--
			continue
		}
		if removeMarked(t, marks, screens) {
			continue
		}
		f := plan.Finding{ID: RuleSectionRemovedUnmarked}
		where := fmt.Sprintf("section %q", t.Label)
		if t.Screen != "" {
			where += fmt.Sprintf(" of screen %q", t.Screen)
		}
		if t.File != "" {
			where += " (" + t.File + ")"
		}
		if s := screens[t.Screen]; s != nil {
			f.Line, f.Col = s.Line, s.Col
		}
		f.Message = fmt.Sprintf("%s was in the plan when task %d started and is gone, with no [REMOVE] marker for task %d: put the <Section> back "+
			"(mark it {/* NO CHANGES for task-%d */} if this task does not touch it). A section leaves the plan only when task.md has a [REMOVE] requirement for it; "+
			"then keep the <Section> with {/* TASK-%d [REMOVE]: … */} so the harness can check its file is gone",
			where, n, n, n, n)
		out = append(out, f)
	}
	return out
}

// removeMarked reports whether a [REMOVE] marker accounts for the lost
// section t: one on its screen, or one whose text names it or its screen.
func removeMarked(t Target, marks []taskMarker, screens map[string]*plan.Node) bool {
	names := keywords(t.Label, t.Screen)
	for w := range t.own {
		names[w] = true
	}
	for _, m := range marks {
		if m.m.Kind != plan.Remove {
			continue
		}
		if s := screens[t.Screen]; s != nil && m.node == s {
			return true
		}
		if len(overlap(keywords(m.m.Text), names)) > 0 {
			return true
		}
	}
	return false
}
