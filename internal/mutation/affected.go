package mutation

import (
	"path"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// Target is a plan element a requirement can change: a <Section>, or the
// <Theme>.
type Target struct {
	Node *plan.Node
	// Screen is the name of the section's screen; "" for the theme.
	Screen string
	// Label names the target in messages: the section's gumdrop (else its
	// title, name or id), or "Theme".
	Label string
	// File is the section's source file (plan.SectionFile); "" for the
	// theme or a section without one.
	File string
	// screenNode is the section's <Screen>; nil for the theme.
	screenNode *plan.Node
	// words are the target's keywords, with those its recipe is usually
	// called by; own are the words of its label and file alone.
	words, own map[string]bool
}

// Targets returns the targets of a plan in document order: the <Theme>
// when there is one, then every section of every screen.
func Targets(root *plan.Node) []Target {
	var out []Target
	if th := plan.Theme(root); th != nil {
		t := Target{Node: th, Label: "Theme"}
		var texts []string
		th.Walk(func(n *plan.Node) bool {
			texts = append(texts, n.Component, n.Text)
			texts = append(texts, stringProps(n)...)
			for _, c := range n.Comments {
				texts = append(texts, c.Text)
			}
			return true
		})
		texts = append(texts, related["theme"])
		t.words = keywords(texts...)
		t.own = keywords("theme")
		out = append(out, t)
	}
	for _, scr := range plan.Collect(root, "Screen") {
		for _, s := range plan.ScreenSections(scr) {
			out = append(out, sectionTarget(scr, s))
		}
	}
	return out
}

func sectionTarget(scr, s *plan.Node) Target {
	t := Target{Node: s, Screen: scr.Str("name"), Label: sectionLabel(s), File: plan.SectionFile(s), screenNode: scr}
	base := strings.TrimSuffix(path.Base(t.File), path.Ext(t.File))
	texts := []string{s.Text, base, t.Screen}
	texts = append(texts, stringProps(s)...)
	for _, c := range s.Comments {
		texts = append(texts, c.Text)
	}
	s.Walk(func(n *plan.Node) bool {
		if n != s {
			texts = append(texts, n.Text)
			texts = append(texts, stringProps(n)...)
		}
		return true
	})
	g := s.Str("gumdrop")
	texts = append(texts, related[g])
	t.words = keywords(texts...)
	t.own = keywords(g, s.Str("title"), s.Str("name"), s.Str("id"), base)
	return t
}

// sectionLabel names a section: its gumdrop, else title, name or id.
func sectionLabel(s *plan.Node) string {
	for _, p := range []string{"gumdrop", "title", "name", "id"} {
		if v := s.Str(p); v != "" {
			return v
		}
	}
	return "section"
}

// stringProps returns n's string prop values.
func stringProps(n *plan.Node) []string {
	var out []string
	for _, v := range n.Props {
		if v.Kind == plan.String {
			out = append(out, v.Str)
		}
	}
	return out
}

// String names the target for people: `features (landing) →
// src/sections/FeaturesSection.tsx`, or `Theme`.
func (t Target) String() string {
	s := t.Label
	if t.Screen != "" {
		s += " (screen " + t.Screen + ")"
	}
	if t.File != "" {
		s += " → " + t.File
	}
	return s
}

// Match is where one requirement of task.md most likely lands.
type Match struct {
	Requirement task.Requirement
	// Targets are the best-scoring targets, at most maxTargets: those
	// task.md lists under AFFECTED FILES first, then document order; none
	// when no target shares a word with the requirement.
	Targets []Target
	// Words are the requirement's words the targets share.
	Words []string
}

// maxTargets caps the targets a Match proposes.
const maxTargets = 3

// Affected maps each requirement of t to the targets of root it most likely
// changes (seed 002's findAffectedSections): the targets sharing the most
// words with the requirement, counting a target's gumdrop, props, text,
// comments, file name and screen, and the words its recipe is usually
// called by ("copy" → hero, cta; "mood" → Theme). Among equals, sections
// whose file task.md lists under AFFECTED FILES come first. Placeholder
// requirements of a template task are skipped.
func Affected(root *plan.Node, t task.Task) []Match {
	targets := Targets(root)
	var out []Match
	for _, r := range t.Requirements {
		if !concrete(r) {
			continue
		}
		out = append(out, match(r, targets, t.AffectedFiles))
	}
	return out
}

// concrete reports whether r is a requirement rather than a template's
// placeholder.
func concrete(r task.Requirement) bool {
	s := strings.TrimSpace(r.Text)
	return s != "" && s != task.Placeholder
}

func match(r task.Requirement, targets []Target, affected []string) Match {
	m := Match{Requirement: r}
	req := keywords(r.Text)
	type scored struct {
		t     Target
		words []string
	}
	var (
		best   int
		top    []scored
		listed []bool
	)
	for _, t := range targets {
		w := overlap(req, t.words)
		switch {
		case len(w) == 0 || len(w) < best:
			continue
		case len(w) > best:
			best, top, listed = len(w), nil, nil
		}
		top = append(top, scored{t, w})
		listed = append(listed, fileListed(t.File, affected))
	}
	// Among equals, sections task.md lists under AFFECTED FILES come first.
	var order []int
	for _, first := range []bool{true, false} {
		for i := range top {
			if listed[i] == first {
				order = append(order, i)
			}
		}
	}
	seen := map[string]bool{}
	for _, i := range order {
		if len(m.Targets) == maxTargets {
			break
		}
		m.Targets = append(m.Targets, top[i].t)
		for _, w := range top[i].words {
			if !seen[w] {
				seen[w] = true
				m.Words = append(m.Words, w)
			}
		}
	}
	slices.Sort(m.Words)
	return m
}

// fileListed reports whether file is among task.md's AFFECTED FILES,
// compared by base name without extension and a trailing "Section", so
// that FlavorGrid.tsx names src/sections/FlavorGridSection.tsx.
func fileListed(file string, affected []string) bool {
	if file == "" {
		return false
	}
	want := fileStem(file)
	for _, a := range affected {
		if a = strings.TrimSpace(a); a == "" || a == task.Placeholder {
			continue
		}
		if fileStem(a) == want {
			return true
		}
	}
	return false
}

func fileStem(p string) string {
	p = path.Base(strings.ReplaceAll(p, `\`, "/"))
	p = strings.TrimSuffix(p, path.Ext(p))
	return strings.ToLower(strings.TrimSuffix(p, "Section"))
}
