package scope

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/task"
)

// Section is a marked plan section and the source file that renders it.
type Section struct {
	Name string // the section's name (its gumdrop), for messages
	File string // the source file, relative to the project root
	// Markers are the markers that apply to the section in this task, each
	// with Task set to the task's number (task-N-pre).
	Markers []plan.Marker
}

// Version is one side of the comparison: the section file at task-N-pre,
// or now. The zero Version is an absent file.
type Version struct {
	Present bool
	Src     []byte
	// Siblings reads files the section file imports, on the same side; see
	// CountItems. It may be nil.
	Siblings func(importPath string) ([]byte, bool)
}

// Target is one marked section with its file before and now.
type Target struct {
	Section Section
	Before  Version
	Now     Version
}

// Input is what Check compares: every marked section of the plan, and
// the requirements of task.md the markers stand for.
type Input struct {
	Targets []Target
	// Task is the task's number N, for messages about requirements no
	// section carries.
	Task int
	// Requirements are task.md's [ADD], [MODIFY], [FIX] and [REMOVE]
	// requirements. Each plan marker of those kinds is linked to one of
	// the same kind (by the words they share), so that its finding names
	// the requirement; a requirement no marker carries is judged on its
	// own.
	Requirements []Requirement
	// Preserve are task.md's PRESERVE lines, which PRESERVED findings name.
	Preserve []string
	// Changed lists the project's files (.ralph/ left out) that differ from
	// task-N-pre, when ChangedKnown: a requirement no marker carries is
	// unmet when nothing changed at all.
	Changed      []string
	ChangedKnown bool
}

// Requirement is one requirement of task.md.
type Requirement struct {
	// N is its 1-based position among task.md's requirements.
	N    int
	Kind task.Kind
	Text string
	// Check is the requirement's own check (task.md's " — check: [...]"),
	// nil when it has none.
	Check []string
	// Ran is the outcome of Check, run by the caller before Check; nil
	// when it was not run.
	Ran *CheckRun
}

// CheckRun is the outcome of a requirement's own check.
type CheckRun struct {
	Passed bool
	// Output is the end of what the check printed, or why it could not
	// run.
	Output string
}

// String names the requirement as findings do: task.md requirement 2
// [FIX] "the CTA links to /signup".
func (r Requirement) String() string {
	return fmt.Sprintf("task.md requirement %d [%s] %q", r.N, r.Kind, clipN(r.Text, 60))
}

// Status is a finding's verdict.
type Status uint8

// Finding verdicts: warnings go to feedback and do not block; failures block.
const (
	Pass Status = iota + 1
	Warn
	Fail
)

// String returns "pass", "warn" or "fail".
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Finding is the verdict on one marker of one section.
type Finding struct {
	Status  Status
	Section string
	File    string
	Message string
	// Fix is an instruction the agent can follow; empty on Pass.
	Fix string
	// Detail says how the items were counted on each side.
	Detail string
	// Requirement is the N of the task.md requirement the finding judges,
	// 0 when it judges none.
	Requirement int
}

// Check applies the scope rules to every marker of every target:
//
//   - Every [ADD], [MODIFY], [FIX] and [REMOVE] marker fails when its
//     section's file is unchanged since task-N-pre: a requirement nobody
//     worked on is never met.
//   - [ADD] N: the item count must rise by exactly N (fail if it rose by
//     less, stayed or fell; warn if it rose by more). Without a number it
//     must rise at all (warn).
//   - PRESERVED: the count must not fall, and every item present at
//     task-N-pre must still be there (compared by normalised text; an
//     object item may gain properties), so converting items fails even
//     when the count is right (fail).
//   - NO CHANGES: the file must be byte-for-byte unchanged (warn).
//   - [REMOVE]: the file must be gone, or the count fall (by N if given)
//     (warn).
//   - [MODIFY]: the file must still exist (fail) and change (fail); a
//     changed item count or element structure warns, since only content
//     was asked for.
//   - [FIX]: the file must change (fail), and the requirement's own check,
//     when task.md gives one, must pass (fail); without one the fix is left
//     to the gates as a whole, and the finding says so.
//
// A requirement of in.Requirements that no marker carries fails when its
// own check fails or when nothing in the project changed since task-N-pre;
// when the plan marks other requirements but not this one it warns.
func Check(in Input) []Finding {
	links := link(in)
	linked := map[int]bool{}
	var out []Finding
	for i, t := range in.Targets {
		c := &checker{t: t}
		for j, m := range t.Section.Markers {
			r := links[[2]int{i, j}]
			if r != nil {
				linked[r.N] = true
			}
			if f, ok := c.marker(m, r); ok {
				if m.Kind == plan.Preserved {
					if p := bestPreserve(m, t.Section, in.Preserve); p != "" {
						f.Message += fmt.Sprintf(" (task.md: PRESERVE %q)", clip(p))
					}
				}
				out = append(out, f)
			}
		}
	}
	marked := len(links) > 0 || hasWorkMarkers(in.Targets)
	for _, r := range in.Requirements {
		if !linked[r.N] {
			out = append(out, unmarked(in, r, marked))
		}
	}
	return out
}

// hasWorkMarkers reports whether any target has an [ADD], [MODIFY], [FIX]
// or [REMOVE] marker.
func hasWorkMarkers(ts []Target) bool {
	for _, t := range ts {
		for _, m := range t.Section.Markers {
			if work(m.Kind) {
				return true
			}
		}
	}
	return false
}

func work(k plan.MarkerKind) bool {
	return k == plan.Add || k == plan.Modify || k == plan.Fix || k == plan.Remove
}

// unmarked judges a requirement no marker carries.
func unmarked(in Input, r Requirement, marked bool) Finding {
	f := Finding{Requirement: r.N}
	pre := "task-N-pre"
	if in.Task > 0 {
		pre = snapshot.TaskPre(in.Task)
	}
	switch {
	case r.Ran != nil && !r.Ran.Passed:
		f.Status = Fail
		f.Message = fmt.Sprintf("%s not done: its check %s fails%s", r, argvString(r.Check), outputTail(r.Ran.Output))
		f.Fix = fmt.Sprintf("Make %s pass by doing what the requirement says; do not change the check.", argvString(r.Check))
	case in.ChangedKnown && len(in.Changed) == 0:
		f.Status = Fail
		f.Message = fmt.Sprintf("%s not done: nothing in the project changed since %s", r, pre)
		f.Fix = fmt.Sprintf("Do what %s asks in the project's files; a task with no change completes nothing.", r)
	case marked:
		f.Status = Warn
		f.Message = fmt.Sprintf("%s is carried by no section of the plan, so it cannot be checked against %s", r, pre)
		f.Fix = fmt.Sprintf("Mark the section it changes in .ralph/plan.tsx with {/* TASK-%d [%s]: … */} and make the change there.", max(in.Task, 1), r.Kind)
	case r.Ran != nil:
		f.Status = Pass
		f.Message = fmt.Sprintf("%s: its check %s passes", r, argvString(r.Check))
	case !in.ChangedKnown:
		f.Status = Pass
		f.Message = fmt.Sprintf("%s: no list of the files changed since %s; the requirement is verified by the gates as a whole", r, pre)
	default:
		f.Status = Pass
		f.Message = fmt.Sprintf("%s: the project changed since %s (%s); the requirement itself is verified by the gates as a whole", r, pre, plural(len(in.Changed), "file"))
	}
	return f
}

// link pairs each [ADD], [MODIFY], [FIX] and [REMOVE] marker of the
// targets, keyed by target and marker index, with the requirement of the
// same kind it most likely stands for: the one sharing the most words
// with the marker, its section's name and its file's name, the least
// linked one on a tie, then the first.
func link(in Input) map[[2]int]*Requirement {
	out := map[[2]int]*Requirement{}
	uses := map[int]int{}
	for i, t := range in.Targets {
		for j, m := range t.Section.Markers {
			if !work(m.Kind) {
				continue
			}
			bag := words(m.Text + " " + t.Section.Name + " " + path.Base(t.Section.File))
			var best *Requirement
			bestScore := -1
			for k := range in.Requirements {
				r := &in.Requirements[k]
				if string(r.Kind) != m.Kind.String() {
					continue
				}
				score := overlap(bag, words(r.Text))
				if score > bestScore || (score == bestScore && uses[r.N] < uses[best.N]) {
					best, bestScore = r, score
				}
			}
			if best != nil {
				out[[2]int{i, j}] = best
				uses[best.N]++
			}
		}
	}
	return out
}

// bestPreserve returns the PRESERVE line of task.md sharing the most words
// with a PRESERVED marker and its section, or "" when none shares any.
func bestPreserve(m plan.Marker, s Section, lines []string) string {
	bag := words(m.Text + " " + s.Name + " " + path.Base(s.File))
	best, bestScore := "", 0
	for _, l := range lines {
		if n := overlap(bag, words(l)); n > bestScore {
			best, bestScore = l, n
		}
	}
	return best
}

// stopWords carry no meaning for linking markers to requirements.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true,
	"that": true, "this": true, "all": true, "new": true, "task": true, "add": true,
	"modify": true, "fix": true, "remove": true, "preserved": true, "tsx": true, "jsx": true,
	"section": true, "not": true, "are": true, "its": true,
}

// words returns the set of lower-case words of three letters or more in
// s, camel case split ("HeroSection" → hero, section), stop words left
// out.
func words(s string) map[string]bool {
	out := map[string]bool{}
	var cur []rune
	flush := func() {
		if w := strings.ToLower(string(cur)); len(cur) >= 3 && !stopWords[w] {
			out[strings.TrimSuffix(w, "s")] = true
		}
		cur = cur[:0]
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func overlap(a, b map[string]bool) int {
	n := 0
	for w := range b {
		if a[w] {
			n++
		}
	}
	return n
}

// checker counts a target's two sides once and judges its markers.
type checker struct {
	t              Target
	counted        bool
	before, now    tally
	hasPre, hasNow bool
}

func (c *checker) counts() {
	if c.counted {
		return
	}
	c.counted = true
	c.hasPre, c.hasNow = c.t.Before.Present, c.t.Now.Present
	if c.hasPre {
		c.before = count(c.t.Before.Src, c.t.Before.Siblings)
	}
	if c.hasNow {
		c.now = count(c.t.Now.Src, c.t.Now.Siblings)
	}
}

func (c *checker) marker(m plan.Marker, r *Requirement) (Finding, bool) {
	c.counts()
	f := Finding{Section: c.t.Section.Name, File: c.t.Section.File}
	if c.hasPre || c.hasNow {
		f.Detail = fmt.Sprintf("before: %s; now: %s", c.side(c.hasPre, c.before), c.side(c.hasNow, c.now))
	}
	if r != nil {
		f.Requirement = r.N
	}
	if work(m.Kind) && c.hasNow && c.untouched() && !(m.Kind == plan.Add && markerCount(m) > 0) {
		c.notDone(&f, m, r)
		return f, true
	}
	switch m.Kind {
	case plan.Add:
		c.add(&f, m)
	case plan.Preserved:
		c.preserved(&f, m)
	case plan.NoChanges:
		c.noChanges(&f, m)
	case plan.Remove:
		c.remove(&f, m)
	case plan.Modify:
		c.modify(&f, m)
	case plan.Fix:
		c.fix(&f, m, r)
	default:
		return Finding{}, false
	}
	if r != nil && r.Ran != nil && !r.Ran.Passed && m.Kind != plan.Fix && f.Status != Fail {
		f.Status = Fail
		f.Message = c.head() + fmt.Sprintf("the requirement's check %s fails%s", argvString(r.Check), outputTail(r.Ran.Output))
		f.Fix = fmt.Sprintf("Make the requirement (%q) true until %s passes; do not change the check.", clipN(r.Text, 60), argvString(r.Check))
	}
	if r != nil && f.Status != Pass {
		f.Message += " — " + r.String()
	}
	return f, true
}

// untouched reports whether the section file is as it was at task-N-pre.
func (c *checker) untouched() bool {
	b, n := c.t.Before, c.t.Now
	return b.Present == n.Present && bytes.Equal(b.Src, n.Src)
}

// notDone fails a work marker whose file nobody changed, naming the
// requirement first: one line per unmet requirement.
func (c *checker) notDone(f *Finding, m plan.Marker, r *Requirement) {
	file := c.t.Section.File
	what := fmt.Sprintf("[%s] %q of the plan", m.Kind, clip(markerText(m)))
	if r != nil {
		what = r.String()
	}
	f.Status = Fail
	f.Detail = "" // nothing changed: the counts say nothing more
	f.Message = fmt.Sprintf("%s not done: %s is unchanged since %s", what, c.sectionFile(), preTag(m))
	f.Fix = fmt.Sprintf("Do what it asks in %s (%s): %s.", file, c.name(), clip(markerText(m)))
	if r != nil && r.Check != nil {
		f.Fix += fmt.Sprintf(" Then %s must pass.", argvString(r.Check))
	}
}

// sectionFile names the section and its file: "hero (src/Hero.tsx)".
func (c *checker) sectionFile() string {
	s := c.t.Section
	if s.Name == "" {
		return s.File
	}
	return fmt.Sprintf("%s (%s)", s.Name, s.File)
}

// markerText is what a marker asks, without its TASK-N [KIND] tag.
func markerText(m plan.Marker) string {
	t := m.Text
	if i := strings.Index(t, "]"); i >= 0 && strings.Contains(t[:i], "[") {
		t = t[i+1:]
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), ":"))
}

func (c *checker) side(present bool, t tally) string {
	if !present {
		return "file absent"
	}
	return t.how
}

// head is the message prefix naming the section and its file.
func (c *checker) head() string {
	s := c.t.Section
	if s.Name == "" {
		return s.File + ": "
	}
	return fmt.Sprintf("%s (%s): ", s.Name, s.File)
}

func (c *checker) name() string {
	if c.t.Section.Name != "" {
		return c.t.Section.Name
	}
	return c.t.Section.File
}

func (c *checker) what() string {
	for _, t := range []tally{c.before, c.now} {
		if t.what != "" {
			return t.what
		}
	}
	return "the section"
}

func preTag(m plan.Marker) string {
	if m.Task > 0 {
		return snapshot.TaskPre(m.Task)
	}
	return "the pre-task snapshot"
}

// restoreCmd returns, in parentheses, the git command that restores file in
// the working tree from the task's pre-task snapshot, leaving the index
// alone; "" when the marker names no task.
func restoreCmd(m plan.Marker, file string) string {
	if m.Task <= 0 {
		return ""
	}
	return fmt.Sprintf(" (git restore --source=%s%s --worktree -- %s)", snapshot.RefPrefix, snapshot.TaskPre(m.Task), file)
}

func (c *checker) add(f *Finding, m plan.Marker) {
	file := c.t.Section.File
	if !c.hasNow {
		f.Status = Fail
		f.Message = c.head() + fmt.Sprintf("[%s] expects new items but %s does not exist", m.Kind, file)
		f.Fix = fmt.Sprintf("Restore or create %s and add the new items there; keep any existing ones.", file)
		return
	}
	pre, now := c.before.n, c.now.n
	n := markerCount(m)
	if n == 0 {
		if now > pre {
			f.Status = Pass
			f.Message = c.head() + fmt.Sprintf("item count rose from %d to %d", pre, now)
			return
		}
		f.Status = Warn
		f.Message = c.head() + fmt.Sprintf("[%s] but no new items detected: had %d items, now has %d", m.Kind, pre, now)
		f.Fix = fmt.Sprintf("Add the new items the marker describes (%q) to %s; keep the existing %d unchanged.", m.Text, c.what(), pre)
		return
	}
	want := pre + n
	switch {
	case now == want:
		f.Status = Pass
		f.Message = c.head() + fmt.Sprintf("%d items (%d + %d)", now, pre, n)
	case now > want:
		f.Status = Warn
		f.Message = c.head() + fmt.Sprintf("expected %d items (%d + %d), found %d", want, pre, n, now)
		f.Fix = fmt.Sprintf("The task asked for %s; check that nothing else was added to %s.", plural(n, "new item"), c.what())
	default:
		f.Status = Fail
		f.Message = c.head() + fmt.Sprintf("expected %d items (%d + %d), found %d", want, pre, n, now)
		if now >= pre {
			f.Fix = fmt.Sprintf("Append %s to %s; keep the existing %d unchanged.", plural(want-now, "new item"), c.what(), pre)
			if now == pre && pre > 0 {
				f.Fix += " Do not convert existing items into the new ones."
			}
		} else {
			f.Fix = fmt.Sprintf("Restore the %s removed from %s since %s, then append %s; keep the existing %d unchanged.",
				plural(pre-now, "item"), c.what(), preTag(m), plural(n, "new item"), pre)
		}
	}
}

func (c *checker) preserved(f *Finding, m plan.Marker) {
	file := c.t.Section.File
	if !c.hasPre {
		f.Status = Pass
		f.Message = c.head() + "nothing to preserve: the file is new"
		return
	}
	pre, now := c.before.n, c.now.n
	if !c.hasNow {
		now = 0
	}
	if now < pre {
		f.Status = Fail
		f.Message = fmt.Sprintf("PRESERVED violation: %s had %d items, now has %d (%s)", c.name(), pre, now, file)
		if !c.hasNow {
			f.Message = fmt.Sprintf("PRESERVED violation: %s had %d items, now has 0 (%s is gone)", c.name(), pre, file)
		}
		f.Fix = fmt.Sprintf("Restore the %s missing from %s exactly as at %s; PRESERVED items must not be removed or converted.",
			plural(pre-now, "item"), c.what(), preTag(m))
		if missing := c.missing(); len(missing) > 0 {
			f.Fix += " Missing: " + quoteList(missing) + "."
		}
		return
	}
	if missing := c.missing(); len(missing) > 0 {
		f.Status = Fail
		f.Message = fmt.Sprintf("PRESERVED violation: %s had %d items, %d of them changed or gone: %s (%s)",
			c.name(), pre, len(missing), quoteList(missing), file)
		f.Fix = fmt.Sprintf("Restore %s exactly as at %s and add any new items alongside them instead of converting existing ones.",
			quoteList(missing), preTag(m))
		return
	}
	f.Status = Pass
	f.Message = c.head() + fmt.Sprintf("all %d preserved items kept (now %d)", pre, now)
}

// missing returns the labels of pre-task items with no counterpart now. It
// compares only counts made the same way on both sides.
func (c *checker) missing() []string {
	if !c.hasPre || !c.hasNow || c.before.items == nil || c.now.items == nil || c.before.method != c.now.method {
		return nil
	}
	return unmatched(c.before.items, c.now.items)
}

// unmatched pairs each old item with a distinct new one, exact text first,
// then an object whose properties include all the old one's, and returns
// the labels of old items left over.
func unmatched(old, cur []item) []string {
	used := make([]bool, len(cur))
	done := make([]bool, len(old))
	for i, o := range old {
		for j, n := range cur {
			if !used[j] && n.text == o.text {
				used[j], done[i] = true, true
				break
			}
		}
	}
	var labels []string
	for i, o := range old {
		if done[i] {
			continue
		}
		found := false
		for j, n := range cur {
			if !used[j] && o.props != nil && n.props != nil && superset(n.props, o.props) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			labels = append(labels, o.label)
		}
	}
	return labels
}

// superset reports whether every property of sub appears in super.
func superset(super, sub []string) bool {
	have := make(map[string]int, len(super))
	for _, p := range super {
		have[p]++
	}
	for _, p := range sub {
		if have[p] == 0 {
			return false
		}
		have[p]--
	}
	return true
}

func quoteList(labels []string) string {
	const shown = 6
	q := make([]string, 0, shown+1)
	for i, l := range labels {
		if i == shown {
			q = append(q, fmt.Sprintf("and %d more", len(labels)-shown))
			break
		}
		q = append(q, fmt.Sprintf("%q", l))
	}
	return strings.Join(q, ", ")
}

func (c *checker) noChanges(f *Finding, m plan.Marker) {
	file := c.t.Section.File
	b, n := c.t.Before, c.t.Now
	var change string
	switch {
	case b.Present && !n.Present:
		change = "was deleted"
	case !b.Present && n.Present:
		change = "was created"
	case b.Present && !bytes.Equal(b.Src, n.Src):
		change = "was modified"
	}
	if change == "" {
		f.Status = Pass
		f.Message = c.head() + "unchanged"
		return
	}
	f.Status = Warn
	tag := fmt.Sprintf("NO CHANGES for task-%d", m.Task)
	if m.Task == 0 {
		tag = "NO CHANGES"
	}
	f.Message = fmt.Sprintf("%s %s but the plan marks section %s %q", file, change, c.name(), tag)
	f.Fix = fmt.Sprintf("Restore %s to its %s content%s unless another marked section needs the change; if it does, say why in summary.md.",
		file, preTag(m), restoreCmd(m, file))
}

func (c *checker) remove(f *Finding, m plan.Marker) {
	file := c.t.Section.File
	if !c.hasNow {
		f.Status = Pass
		f.Message = c.head() + "removed"
		return
	}
	pre, now := c.before.n, c.now.n
	if n := markerCount(m); n > 0 {
		if want := max(pre-n, 0); now > want {
			f.Status = Warn
			f.Message = c.head() + fmt.Sprintf("expected at most %d items (%d - %d), found %d", want, pre, n, now)
			f.Fix = fmt.Sprintf("Remove the %s the [REMOVE] marker names (%q) from %s; leave the others.", plural(n, "item"), m.Text, c.what())
			return
		}
		f.Status = Pass
		f.Message = c.head() + fmt.Sprintf("%d items (%d - %d)", now, pre, n)
		return
	}
	if c.hasPre && now < pre {
		f.Status = Pass
		f.Message = c.head() + fmt.Sprintf("item count fell from %d to %d", pre, now)
		return
	}
	f.Status = Warn
	f.Message = c.head() + fmt.Sprintf("[%s] but %s is still present", m.Kind, file)
	f.Fix = fmt.Sprintf("Remove what the marker names (%q) from %s, or delete the file if the whole section goes.", m.Text, file)
}

func (c *checker) modify(f *Finding, m plan.Marker) {
	file := c.t.Section.File
	if c.hasNow {
		var changed []string
		if c.hasPre && c.before.method != methodNone && c.before.method == c.now.method && c.before.n != c.now.n {
			changed = append(changed, fmt.Sprintf("its item count went from %d to %d", c.before.n, c.now.n))
		}
		if c.hasPre {
			if d := structureChange(c.t.Before.Src, c.t.Now.Src); d != "" {
				changed = append(changed, d)
			}
		}
		if len(changed) > 0 {
			f.Status = Warn
			f.Message = c.head() + fmt.Sprintf("[%s] asks for changed content, but %s", m.Kind, strings.Join(changed, " and "))
			f.Fix = fmt.Sprintf("Keep the items and elements of %s as they were at %s and change their content; if the requirement needs more, say why in summary.md.", file, preTag(m))
			return
		}
		f.Status = Pass
		f.Message = c.head() + "changed in place"
		return
	}
	f.Status = Fail
	f.Message = c.head() + fmt.Sprintf("[%s] section's file %s is gone", m.Kind, file)
	f.Fix = fmt.Sprintf("Restore %s from %s%s and change it in place; [MODIFY] changes content, not structure.",
		file, preTag(m), restoreCmd(m, file))
}

// fix judges a [FIX] marker whose file changed: by the requirement's own
// check when task.md gives one, else it is left to the gates as a whole.
func (c *checker) fix(f *Finding, m plan.Marker, r *Requirement) {
	file := c.t.Section.File
	f.Detail = "" // a fix is not judged by counts
	switch {
	case !c.hasNow:
		f.Status = Fail
		f.Message = c.head() + fmt.Sprintf("[%s] section's file %s is gone", m.Kind, file)
		f.Fix = fmt.Sprintf("Restore %s from %s%s and repair the behaviour there.", file, preTag(m), restoreCmd(m, file))
	case r != nil && r.Ran != nil && !r.Ran.Passed:
		f.Status = Fail
		f.Message = c.head() + fmt.Sprintf("changed, but the requirement's check %s still fails%s", argvString(r.Check), outputTail(r.Ran.Output))
		f.Fix = fmt.Sprintf("Make the requirement (%q) true in %s until %s passes; do not change the check.", clipN(r.Text, 60), file, argvString(r.Check))
	case r != nil && r.Ran != nil:
		f.Status = Pass
		f.Message = c.head() + fmt.Sprintf("changed, and %s passes", argvString(r.Check))
	default:
		f.Status = Pass
		f.Message = c.head() + "changed; the fix itself is verified by the gates as a whole (task.md gives it no check of its own)"
	}
}

// structureChange describes how the JSX elements of before and now
// differ, or returns "" when they are the same in the same order.
func structureChange(before, now []byte) string {
	a, b := tags(before), tags(now)
	if len(a) == len(b) {
		for i := range a {
			if a[i] != b[i] {
				return fmt.Sprintf("its elements changed (<%s> became <%s>)", a[i], b[i])
			}
		}
		return ""
	}
	return fmt.Sprintf("its elements changed (%d JSX elements, now %d)", len(a), len(b))
}

// tags lists the tag names of the JSX elements of src in order.
func tags(src []byte) []string {
	var out []string
	for _, t := range tokenize(src) {
		if t.kind == tkJSXOpen {
			out = append(out, t.text)
		}
	}
	return out
}

// argvString shows an argv as the user would read it, with %q quoting
// where an argument would be ambiguous; it is never run through a shell.
func argvString(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'`$\\") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = a
	}
	return "`" + strings.Join(q, " ") + "`"
}

// outputTail returns ": " and the last non-blank line of a check's output,
// clipped, or "" when there is none.
func outputTail(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return ": " + clipN(last, 120)
}

// numberWords are the spelled-out counts markers use ("add two drinks").
var numberWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}

// markerCount returns the marker's Count, or else the first number in its
// text after the marker tag ("TASK-3 [ADD]: 2 nighttime drinks" → 2).
func markerCount(m plan.Marker) int {
	if m.Count > 0 {
		return m.Count
	}
	text := m.Text
	if i := strings.LastIndex(text, "]"); i >= 0 {
		text = text[i+1:]
	}
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-')
	})
	for _, w := range fields {
		if n, ok := parseCount(token{kind: tkNumber, text: w}); ok && n > 0 {
			return n
		}
		if n, ok := numberWords[strings.ToLower(w)]; ok {
			return n
		}
	}
	return 0
}
