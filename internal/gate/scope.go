package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/scope"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/task"
)

// SnapshotFiles reads files as a snapshot holds them; *snapshot.Repo is
// one.
type SnapshotFiles interface {
	// ReadFile returns the file at path (slash-separated, relative to the
	// root) in the snapshot called name; a file the snapshot does not hold
	// is an error matching fs.ErrNotExist.
	ReadFile(ctx context.Context, name, path string) ([]byte, error)
	// Exists reports whether a snapshot called name exists.
	Exists(ctx context.Context, name string) (bool, error)
}

var _ SnapshotFiles = (*snapshot.Repo)(nil)

// Scope is the scope gate (SPEC §9, seed 002 §7). When the plan carries
// change markers for the current task, it compares each marked section's
// source file now with the file at task-N-pre and applies scope.Check:
// an [ADD] of N items must raise the item count by exactly N, PRESERVED
// items must all survive unconverted, NO CHANGES files must be untouched,
// and so on. Every [ADD], [MODIFY], [FIX] and [REMOVE] marker names the
// requirement of .ralph/task.md it stands for and fails when its file is
// unchanged since task-N-pre; a requirement's own check (task.md's
// " — check: [argv]") is run and must pass; a requirement no marker
// carries fails when nothing in the project changed. Any failing marker
// fails the gate; warnings alone warn.
//
// A section's markers are those of its own comments for task N (and
// PRESERVED and NO CHANGES markers that name no task); a section with none
// of its own takes those of its enclosing <Screen> or <Content>, so
// {/* NO CHANGES for task-3 */} at the top of a screen covers its
// sections. A section's source file is its file prop, else the suggested
// file of its gumdrop (plan.SectionFile), else, when that file exists
// neither now nor at task-N-pre, the file Touched names.
type Scope struct {
	// Snapshots reads task-N-pre. Without it (nil, or a nil
	// *snapshot.Repo) the gate warns that it cannot check.
	Snapshots SnapshotFiles
	// Plan returns the current plan; nil reads .ralph/plan.tsx under the
	// workspace root. A nil plan and no error means there is no plan.
	Plan func() (*plan.Node, error)
	// Touched optionally names the file the agent's tool calls touched for
	// a section whose file cannot be found otherwise; "" when unknown.
	Touched func(section *plan.Node) string
	// CheckTimeout bounds each requirement's own check; zero means
	// DefaultTimeout.
	CheckTimeout time.Duration
}

// changeLister lists the files that differ between a snapshot and the
// working tree; *snapshot.Repo is one. The scope gate uses it, when its
// Snapshots have it, to tell a task that changed nothing.
type changeLister interface {
	Diff(ctx context.Context, name string) ([]snapshot.FileChange, error)
}

var _ changeLister = (*snapshot.Repo)(nil)

// scopeReadTimeout bounds the git reads of one gate run.
const scopeReadTimeout = time.Minute

// Name returns "scope".
func (*Scope) Name() string { return "scope" }

// MayWriteTree reports whether task.md gives a requirement a check of its
// own: the gate runs it as a command gate runs its program, which may
// write anywhere in the tree. Otherwise it only reads.
func (*Scope) MayWriteTree(env Env) bool {
	reqs, _ := requirements(env.Root)
	for _, r := range reqs {
		if r.Check != nil {
			return true
		}
	}
	return false
}

// Check compares the marked sections' files with task-N-pre.
func (s *Scope) Check(ctx context.Context, env Env) Result {
	n := env.Task
	if n <= 0 {
		return Result{Status: Skip, Message: "no current task: nothing to check"}
	}
	root, err := s.plan(env)
	if err != nil {
		return Result{Status: Fail,
			Message: fmt.Sprintf("the plan cannot be read, so the scope of task %d cannot be checked: %v", n, err),
			Fix:     "Repair .ralph/plan.tsx so that it parses again, keeping the change markers of this task; `ralph plan validate` shows where it breaks."}
	}
	reqs, preserve := requirements(env.Root)
	marked := root != nil && hasTaskMarkers(root, n)
	if !marked && len(reqs) == 0 {
		return Result{Status: Skip, Message: fmt.Sprintf("no change markers for task %d", n)}
	}
	var sections []markedSection
	if marked {
		sections = markedSections(root, n)
	}
	if len(sections) == 0 && len(reqs) == 0 {
		return Result{Status: Skip, Message: fmt.Sprintf("the markers of task %d are on no section with a source file (theme or screen only): nothing to compare", n)}
	}
	what := scopePlural(len(sections), "marked section")
	if len(sections) == 0 {
		what = scopePlural(len(reqs), "requirement")
	}
	pre := snapshot.TaskPre(n)
	if r, ok := s.Snapshots.(*snapshot.Repo); s.Snapshots == nil || (ok && r == nil) {
		return Result{Status: Warn, Message: fmt.Sprintf("no snapshots: the %s of task %d cannot be compared with %s", what, n, pre)}
	}
	// The requirements' own checks run first, each with its own timeout.
	s.runChecks(ctx, env, reqs)
	ctx, cancel := context.WithTimeout(ctx, scopeReadTimeout)
	defer cancel()
	ok, err := s.Snapshots.Exists(ctx, pre)
	if err != nil || !ok {
		why := "does not exist"
		if err != nil {
			why = "cannot be read: " + err.Error()
		}
		if f := failedChecks(n, reqs); f.Status == Fail {
			return f // a requirement's own check speaks without a snapshot
		}
		if len(sections) == 0 && err == nil {
			return Result{Status: Skip, Message: fmt.Sprintf("no %s (the first task on an empty tree): task %d's requirements are left to the other gates", pre, n)}
		}
		return Result{Status: Warn, Message: fmt.Sprintf("snapshot %s %s, so the %s of task %d cannot be compared with the state before the task", pre, why, what, n)}
	}

	rep := scopeReport{task: n}
	in := scope.Input{Task: n, Requirements: reqs, Preserve: preserve}
	if d, ok := s.Snapshots.(changeLister); ok {
		if changes, err := d.Diff(ctx, pre); err == nil {
			in.ChangedKnown = true
			for _, c := range changes {
				if c.Path != ".ralph" && !strings.HasPrefix(c.Path, ".ralph/") {
					in.Changed = append(in.Changed, c.Path)
				}
			}
		}
	}
	now := os.DirFS(env.Root)
	before := snapshotFS{ctx: ctx, files: s.Snapshots, name: pre}
	for _, sec := range sections {
		file := plan.SectionFile(sec.node)
		var bv, nv scope.Version
		var berr error
		if file != "" {
			bv, berr = version(before, file)
			nv, _ = version(now, file)
		}
		if file == "" || (berr == nil && !bv.Present && !nv.Present && sec.node.Str("file") == "") {
			if t := s.touched(sec.node); t != "" && t != file {
				file = t
				bv, berr = version(before, file)
				nv, _ = version(now, file)
			}
		}
		if file == "" {
			rep.warn(fmt.Sprintf("section %s has markers for task %d but no source file", sec.name, n),
				fmt.Sprintf("Give the <Section> at plan.tsx:%d a gumdrop or a file=\"src/…\" prop naming its source file.", sec.node.Line), "")
			continue
		}
		if berr != nil {
			rep.warn(fmt.Sprintf("%s at %s cannot be read (%v): section %s not checked", file, pre, berr, sec.name), "", "")
			continue
		}
		rep.sections++
		rep.unnamed = append(rep.unnamed, !bv.Present && !nv.Present && sec.node.Str("file") == "")
		in.Targets = append(in.Targets, scope.Target{
			Section: scope.Section{Name: sec.name, File: file, Markers: sec.markers},
			Before:  bv,
			Now:     nv,
		})
	}
	rep.add(scope.Check(in), in.Targets)
	return rep.result()
}

// requirements reads task.md's [ADD], [MODIFY], [FIX] and [REMOVE]
// requirements and its PRESERVE lines; none when task.md is missing,
// unreadable or still the template.
func requirements(root string) ([]scope.Requirement, []string) {
	src, err := os.ReadFile(filepath.Join(root, ".ralph", "task.md"))
	if err != nil {
		return nil, nil
	}
	t, err := task.Parse(src)
	if err != nil {
		return nil, nil
	}
	var out []scope.Requirement
	for i, r := range t.Requirements {
		if r.Kind == task.Open || strings.TrimSpace(r.Text) == task.Placeholder {
			continue
		}
		out = append(out, scope.Requirement{N: i + 1, Kind: r.Kind, Text: r.Text, Check: r.Check})
	}
	var preserve []string
	for _, p := range t.Preserve {
		if strings.TrimSpace(p) != task.Placeholder {
			preserve = append(preserve, p)
		}
	}
	return out, preserve
}

// failedChecks fails with one line per requirement whose own check
// failed; the zero Result when none did.
func failedChecks(n int, reqs []scope.Requirement) Result {
	rep := scopeReport{task: n}
	for _, f := range scope.Check(scope.Input{Task: n, Requirements: reqs}) {
		if f.Status == scope.Fail {
			rep.add([]scope.Finding{f}, nil)
		}
	}
	if len(rep.fails) == 0 {
		return Result{}
	}
	return rep.result()
}

// runChecks runs each requirement's own check, as a command gate runs its
// argv (no shell, its own process group, a timeout), and records the
// outcome on the requirement.
func (s *Scope) runChecks(ctx context.Context, env Env, reqs []scope.Requirement) {
	for i := range reqs {
		r := &reqs[i]
		if r.Check == nil {
			continue
		}
		c := &Command{GateName: fmt.Sprintf("task.md requirement %d", r.N), Argv: r.Check, Timeout: s.CheckTimeout}
		res := c.Check(ctx, env)
		r.Ran = &scope.CheckRun{Passed: res.Status == Pass, Output: checkOutput(res.Message, c.Argv)}
	}
}

// checkOutput takes what a requirement's check printed out of a command
// gate's message, or, when it printed nothing, how it ended ("exited with
// status 1").
func checkOutput(msg string, argv []string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	head := strings.TrimSuffix(strings.TrimPrefix(lines[0], "`"+strings.Join(argv, " ")+"`"), ":")
	var out []string
	for _, l := range lines[1:] {
		if t := strings.TrimSpace(l); t != "" && t != "```" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return strings.TrimSpace(strings.TrimPrefix(head, ":"))
	}
	return strings.Join(out, "\n")
}

// plan returns the current plan.
func (s *Scope) plan(env Env) (*plan.Node, error) {
	if s.Plan != nil {
		return s.Plan()
	}
	src, err := os.ReadFile(filepath.Join(env.Root, ".ralph", "plan.tsx"))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(bytes.TrimSpace(src)) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return plan.Parse(src)
}

func (s *Scope) touched(section *plan.Node) string {
	if s.Touched == nil {
		return ""
	}
	f := filepath.ToSlash(strings.TrimSpace(s.Touched(section)))
	if !fs.ValidPath(f) || f == "." {
		return ""
	}
	return f
}

// version reads one side of a section file; a file that is not there is
// the zero Version, and only other errors are returned.
func version(fsys fs.FS, file string) (scope.Version, error) {
	src, err := fs.ReadFile(fsys, file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return scope.Version{}, nil
	case err != nil:
		return scope.Version{}, err
	}
	return scope.Version{Present: true, Src: src, Siblings: scope.FSSiblings(fsys, file)}, nil
}

// markedSection is a section with the markers that apply to it.
type markedSection struct {
	node    *plan.Node
	name    string
	markers []plan.Marker
}

// hasTaskMarkers reports whether any element of root has a marker for
// task n.
func hasTaskMarkers(root *plan.Node, n int) bool {
	found := false
	root.Walk(func(node *plan.Node) bool {
		for _, m := range node.Markers {
			if m.Task == n {
				found = true
			}
		}
		return !found
	})
	return found
}

// markedSections returns the sections of root that have markers for task
// n, their own or their screen's, in document order.
func markedSections(root *plan.Node, n int) []markedSection {
	var out []markedSection
	for _, sec := range plan.Sections(root) {
		ms := applicable(sec.Markers, n)
		if len(ms) == 0 {
			chain := plan.Path(root, sec)
			for i := len(chain) - 2; i > 0 && len(ms) == 0; i-- {
				ms = applicable(chain[i].Markers, n)
			}
		}
		if len(ms) == 0 {
			continue
		}
		out = append(out, markedSection{node: sec, name: sectionName(sec), markers: ms})
	}
	return out
}

// applicable returns the markers that apply in task n, with Task set to n:
// those naming task n, and PRESERVED and NO CHANGES markers naming no task.
// An unnumbered PRESERVED marker yields to a [REMOVE] of task n on the same
// element.
func applicable(ms []plan.Marker, n int) []plan.Marker {
	removes := false
	for _, m := range ms {
		if m.Task == n && m.Kind == plan.Remove {
			removes = true
		}
	}
	var out []plan.Marker
	for _, m := range ms {
		switch {
		case m.Task == n:
		case m.Task == 0 && m.Kind == plan.NoChanges:
		case m.Task == 0 && m.Kind == plan.Preserved && !removes:
		default:
			continue
		}
		m.Task = n
		out = append(out, m)
	}
	return out
}

// sectionName names a section in messages: its gumdrop, else its title,
// name or id.
func sectionName(s *plan.Node) string {
	for _, p := range []string{"gumdrop", "title", "name", "id"} {
		if v := s.Str(p); v != "" {
			return v
		}
	}
	return fmt.Sprintf("at plan.tsx:%d", s.Line)
}

// scopeReport gathers the verdicts of one run into a Result.
type scopeReport struct {
	task     int
	sections int
	unnamed  []bool // per target: its file is a guess found on neither side
	fails    []string
	unmet    map[int]bool // the task.md requirements a failing finding judges
	warns    []string
	passes   []string
	fixes    []string
}

func (r *scopeReport) warn(msg, fix, detail string) {
	if detail != "" {
		msg += "\n  counted: " + detail
	}
	r.warns = append(r.warns, msg)
	if fix != "" {
		r.fixes = append(r.fixes, fix)
	}
}

// add records the findings of scope.Check on targets.
func (r *scopeReport) add(findings []scope.Finding, targets []scope.Target) {
	unnamed := map[string]bool{}
	for i, t := range targets {
		if r.unnamed[i] {
			unnamed[t.Section.File] = true
		}
	}
	counted := map[string]bool{} // a file's counts are shown once
	for _, f := range findings {
		if counted[f.File+"\x00"+f.Detail] {
			f.Detail = ""
		}
		if f.Status != scope.Pass && f.Detail != "" {
			counted[f.File+"\x00"+f.Detail] = true
		}
		fix := f.Fix
		if fix != "" && unnamed[f.File] {
			fix += fmt.Sprintf(" If the section's source is not %s, name it with file=\"…\" on its <Section> in the plan.", f.File)
		}
		switch f.Status {
		case scope.Fail:
			if f.Requirement > 0 {
				if r.unmet == nil {
					r.unmet = map[int]bool{}
				}
				r.unmet[f.Requirement] = true
			}
			msg := f.Message
			if f.Detail != "" {
				msg += "\n  counted: " + f.Detail
			}
			r.fails = append(r.fails, msg)
			if fix != "" {
				r.fixes = append(r.fixes, fix)
			}
		case scope.Warn:
			r.warn(f.Message, fix, f.Detail)
		case scope.Pass:
			r.passes = append(r.passes, f.Message)
		}
	}
}

func (r *scopeReport) result() Result {
	var b strings.Builder
	var status Status
	switch {
	case len(r.unmet) > 0:
		status = Fail
		fmt.Fprintf(&b, "task %d is not done: %s of .ralph/task.md not met (%s, %s):", r.task, scopePlural(len(r.unmet), "requirement"), scopePlural(len(r.fails), "failure"), scopePlural(len(r.warns), "warning"))
	case len(r.fails) > 0:
		status = Fail
		fmt.Fprintf(&b, "task %d stepped outside the plan's change markers (%s, %s):", r.task, scopePlural(len(r.fails), "failure"), scopePlural(len(r.warns), "warning"))
	case len(r.warns) > 0:
		status = Warn
		fmt.Fprintf(&b, "task %d: the plan's change markers hold with %s:", r.task, scopePlural(len(r.warns), "warning"))
	default:
		fmt.Fprintf(&b, "task %d: every change marker on %s holds", r.task, scopePlural(r.sections, "section"))
		if len(r.passes) > 0 {
			b.WriteString(": " + strings.Join(r.passes, "; "))
		}
		return Result{Status: Pass, Message: b.String()}
	}
	for _, f := range r.fails {
		b.WriteString("\n- FAIL " + f)
	}
	for _, w := range r.warns {
		b.WriteString("\n- WARN " + w)
	}
	var fix strings.Builder
	for i, f := range r.fixes {
		if i > 0 {
			fix.WriteString("\n")
		}
		if len(r.fixes) > 1 {
			fix.WriteString("- ")
		}
		fix.WriteString(f)
	}
	return Result{Status: status, Message: b.String(), Fix: fix.String()}
}

func scopePlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// snapshotFS is the file system of one snapshot, read through ReadFile,
// so that scope.FSSiblings can follow imports at task-N-pre. It carries
// the context of the gate run because fs.FS methods take none.
type snapshotFS struct {
	ctx   context.Context
	files SnapshotFiles
	name  string
}

// ReadFile implements fs.ReadFileFS.
func (s snapshotFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	b, err := s.files.ReadFile(s.ctx, s.name, name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return b, nil
}

// Open implements fs.FS for regular files.
func (s snapshotFS) Open(name string) (fs.File, error) {
	b, err := s.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open"
		}
		return nil, err
	}
	return &snapshotFile{info: snapshotInfo{name: path.Base(name), size: int64(len(b))}, r: bytes.NewReader(b)}, nil
}

// snapshotFile is an open file of a snapshotFS.
type snapshotFile struct {
	info snapshotInfo
	r    *bytes.Reader
}

func (f *snapshotFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *snapshotFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *snapshotFile) Close() error               { return nil }

// snapshotInfo describes a file of a snapshotFS.
type snapshotInfo struct {
	name string
	size int64
}

func (i snapshotInfo) Name() string       { return i.name }
func (i snapshotInfo) Size() int64        { return i.size }
func (i snapshotInfo) Mode() fs.FileMode  { return 0o444 }
func (i snapshotInfo) ModTime() time.Time { return time.Time{} }
func (i snapshotInfo) IsDir() bool        { return false }
func (i snapshotInfo) Sys() any           { return nil }
