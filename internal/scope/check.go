package scope

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
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

// Input is what Check compares: every marked section of the plan.
type Input struct {
	Targets []Target
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
}

// Check applies the scope rules to every marker of every target:
//
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
//   - [MODIFY]: the file must still exist (fail).
//   - [FIX] is left to the functional gates and yields no finding.
func Check(in Input) []Finding {
	var out []Finding
	for _, t := range in.Targets {
		c := &checker{t: t}
		for _, m := range t.Section.Markers {
			if f, ok := c.marker(m); ok {
				out = append(out, f)
			}
		}
	}
	return out
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

func (c *checker) marker(m plan.Marker) (Finding, bool) {
	c.counts()
	f := Finding{Section: c.t.Section.Name, File: c.t.Section.File}
	if c.hasPre || c.hasNow {
		f.Detail = fmt.Sprintf("before: %s; now: %s", c.side(c.hasPre, c.before), c.side(c.hasNow, c.now))
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
	default:
		return Finding{}, false
	}
	return f, true
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
		f.Status = Pass
		f.Message = c.head() + "still present"
		return
	}
	f.Status = Fail
	f.Message = c.head() + fmt.Sprintf("[%s] section's file %s is gone", m.Kind, file)
	f.Fix = fmt.Sprintf("Restore %s from %s%s and change it in place; [MODIFY] changes content, not structure.",
		file, preTag(m), restoreCmd(m, file))
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
