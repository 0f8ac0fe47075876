package guard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// ConfigFile is ralph.toml's name: the gates themselves live there, so it
// is always protected.
const ConfigFile = "ralph.toml"

// CommandGate is what protection needs of a command gate: what it runs
// and where.
type CommandGate struct {
	Name string   `json:"name"`
	Argv []string `json:"run"`
	// Dir is the gate's working directory relative to the root; "" is
	// the root.
	Dir string `json:"dir,omitempty"`
	// Timeout and Optional are part of what a gate is: a shorter timeout
	// or an optional flag weakens it.
	Timeout  string `json:"timeout,omitempty"`
	Optional bool   `json:"optional,omitempty"`
}

// Protection says which files the gates depend on: ralph.toml, the files
// the gates' argv names, the package.json scripts and Makefiles they run,
// and the files matching Globs.
type Protection struct {
	Globs []string
	Gates []CommandGate
}

// Change is a protected file the agent deleted or modified since the
// task's start, or a new file that changes how the tests run.
type Change struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted,omitempty"`
	Added   bool   `json:"added,omitempty"`
	// Why says what makes the file protected.
	Why string `json:"why"`
	// Diff is the change as a unified diff, cut short when long; empty
	// for a deletion.
	Diff string `json:"-"`
}

// Line is the change in one line: "M scripts/check.sh (a gate runs it)".
func (c Change) Line() string {
	op := "M"
	switch {
	case c.Deleted:
		op = "D"
	case c.Added:
		op = "A"
	}
	return fmt.Sprintf("%s %s (%s)", op, c.Path, c.Why)
}

// Snapshots is what protection needs of the snapshot store.
type Snapshots interface {
	Resolve(ctx context.Context, name string) (snapshot.Snapshot, error)
	Diff(ctx context.Context, name string) ([]snapshot.FileChange, error)
	ReadFile(ctx context.Context, name, path string) ([]byte, error)
}

// Changes lists the protected files of the working tree at root that
// differ from the snapshot pre (task-N-pre): deleted or modified ones. New
// files are listed only when they change how the tests run (RunnerHook):
// adding a test is welcome.
func (p Protection) Changes(ctx context.Context, snaps Snapshots, root, pre string) ([]Change, error) {
	diff, err := snaps.Diff(ctx, pre)
	if err != nil {
		return nil, err
	}
	files := p.gateFiles()
	scripts := p.packageScripts()
	var out []Change
	for _, fc := range diff {
		// .ralph/ is the harness's and the agent's protocol, never what
		// the gates check; its private files are never in a snapshot.
		if workspace.IsPrivate(fc.Path) || strings.HasPrefix(fc.Path, workspace.Dir+"/") {
			continue
		}
		if fc.Change == snapshot.Added {
			if why := RunnerHook(root, fc.Path); why != "" {
				out = append(out, Change{Path: fc.Path, Added: true, Why: why, Diff: addedText(root, fc.Path)})
			}
			continue
		}
		why := ""
		switch {
		case fc.Path == ConfigFile:
			why = "ralph.toml holds the gates"
		case files[fc.Path] != "":
			why = files[fc.Path]
		case len(scripts[fc.Path]) > 0:
			why = changedScripts(ctx, snaps, root, pre, fc, scripts[fc.Path])
		default:
			if g := p.glob(fc.Path); g != "" {
				why = "matches " + g
			}
		}
		if why == "" {
			continue
		}
		c := Change{Path: fc.Path, Deleted: fc.Change == snapshot.Deleted, Why: why}
		if !c.Deleted {
			c.Diff = diffText(ctx, snaps, root, pre, fc.Path)
		}
		out = append(out, c)
	}
	return out, nil
}

// runnerFiles name test runner configuration and hooks: a new one changes
// how the tests already there run (a conftest.py can mark every test
// passed), where a new test file only adds tests.
var runnerFiles = []string{
	"conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "sitecustomize.py", "usercustomize.py",
	"jest.config.*", "jest.setup.*", "vitest.config.*", "vitest.setup.*", "vitest.workspace.*",
	"playwright.config.*", "karma.conf.*", ".mocharc*", "setupTests.*",
}

// RunnerHook says why a new file at rel (slash-separated, under root)
// changes how existing tests run, or "" when it does not: a test runner's
// configuration or hook file, or a Go test file that declares TestMain,
// which decides whether its package's tests run at all.
func RunnerHook(root, rel string) string {
	base := path.Base(rel)
	for _, g := range runnerFiles {
		if ok, _ := path.Match(g, base); ok {
			return "new " + g + ": it configures how the tests run"
		}
	}
	if strings.HasSuffix(base, "_test.go") {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err == nil && testMain.Match(b) {
			return "new TestMain: it decides whether its package's tests run"
		}
	}
	return ""
}

// testMain finds a TestMain declaration in Go source.
var testMain = regexp.MustCompile(`(?m)^func\s+TestMain\s*\(`)

// addedText is a new file as a diff from nothing, cut short when long.
func addedText(root, rel string) string {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	more := 0
	if len(lines) > maxDiffLines {
		more, lines = len(lines)-maxDiffLines, lines[:maxDiffLines]
	}
	out := []string{"--- /dev/null", "+++ b/" + rel}
	for _, l := range lines {
		out = append(out, "+"+l)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… %d more lines", more))
	}
	return strings.Join(out, "\n")
}

// glob returns the first of p.Globs that matches rel, "" when none does.
func (p Protection) glob(rel string) string {
	for _, g := range p.Globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return g
		}
		// A pattern without a slash matches a name at any depth, as in
		// .gitignore.
		if !strings.Contains(g, "/") {
			if ok, _ := doublestar.Match(g, path.Base(rel)); ok {
				return g
			}
		}
	}
	return ""
}

// gateFiles maps each repository file a gate's argv names (an argument, or
// the value of --flag=value) to why it is protected. Whether a candidate
// is a file is settled by the snapshot's diff: only paths that changed are
// looked up.
func (p Protection) gateFiles() map[string]string {
	out := map[string]string{}
	for _, g := range p.Gates {
		for i, arg := range g.Argv {
			if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
				arg = v
			}
			if rel := repoPath(g.Dir, arg); rel != "" {
				out[rel] = fmt.Sprintf("gate %s runs it", g.Name)
				if i > 0 {
					out[rel] = fmt.Sprintf("gate %s reads it", g.Name)
				}
			}
		}
		if len(g.Argv) > 0 && path.Base(g.Argv[0]) == "make" {
			for _, mf := range []string{"Makefile", "makefile", "GNUmakefile"} {
				out[repoPath(g.Dir, mf)] = fmt.Sprintf("gate %s runs make", g.Name)
			}
		}
	}
	return out
}

// repoPath is arg as a slash-separated path relative to the repository
// root, for a gate running in dir; "" when arg is not a plain relative
// path inside the repository.
func repoPath(dir, arg string) string {
	if arg == "" || strings.HasPrefix(arg, "-") || filepath.IsAbs(arg) || strings.ContainsAny(arg, "*?[\n") {
		return ""
	}
	rel := path.Clean(path.Join(filepath.ToSlash(dir), filepath.ToSlash(arg)))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return rel
}

// packageScripts maps each package.json a gate runs a script of (npm,
// pnpm, yarn, bun) to the names of those scripts.
func (p Protection) packageScripts() map[string][]string {
	out := map[string][]string{}
	for _, g := range p.Gates {
		name := scriptName(g.Argv)
		if name == "" {
			continue
		}
		pj := repoPath(g.Dir, "package.json")
		if !slices.Contains(out[pj], name) {
			out[pj] = append(out[pj], name)
		}
	}
	return out
}

// scriptName is the package.json script argv runs, "" when it runs none:
// npm test, npm run X, pnpm X, yarn X, bun run X.
func scriptName(argv []string) string {
	if len(argv) < 2 {
		return ""
	}
	switch path.Base(argv[0]) {
	case "npm", "pnpm", "yarn", "bun":
	default:
		return ""
	}
	args := argv[1:]
	switch args[0] {
	case "run", "run-script":
		if len(args) > 1 {
			return args[1]
		}
		return ""
	case "t", "tst":
		return "test"
	case "test", "start":
		return args[0]
	}
	if path.Base(argv[0]) != "npm" && !strings.HasPrefix(args[0], "-") {
		return args[0] // pnpm lint, yarn typecheck
	}
	return ""
}

// changedScripts says which of the scripts a gate runs changed in the
// package.json fc, "" when none did (a new dependency is not the gate's
// business).
func changedScripts(ctx context.Context, snaps Snapshots, root, pre string, fc snapshot.FileChange, names []string) string {
	before := scriptsOf(readAt(ctx, snaps, pre, fc.Path))
	var now map[string]string
	if fc.Change != snapshot.Deleted {
		b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(fc.Path)))
		now = scriptsOf(b)
	}
	var changed []string
	for _, n := range names {
		if before[n] != now[n] {
			changed = append(changed, fmt.Sprintf("%q", n))
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return "a gate runs its script " + joinList(changed)
}

func readAt(ctx context.Context, snaps Snapshots, pre, rel string) []byte {
	b, _ := snaps.ReadFile(ctx, pre, rel)
	return b
}

// scriptsOf reads package.json's scripts; garbage reads as none.
func scriptsOf(b []byte) map[string]string {
	var pj struct {
		Scripts map[string]string `json:"scripts"`
	}
	_ = json.Unmarshal(b, &pj)
	return pj.Scripts
}

// maxDiffLines caps each file's diff in an approval request.
const maxDiffLines = 60

// diffText is git's unified diff of rel from the snapshot pre to the
// working tree, cut at maxDiffLines.
func diffText(ctx context.Context, snaps Snapshots, root, pre, rel string) string {
	s, err := snaps.Resolve(ctx, pre)
	if err != nil {
		return ""
	}
	blob, err := git.Line(ctx, root, "hash-object", "-w", "--", rel)
	if err != nil {
		return ""
	}
	out, err := git.Run(ctx, root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", s.Commit+":"+rel, blob)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// git names blobs, not files, in the header: name the file.
	for i, l := range lines {
		if strings.HasPrefix(l, "@@") {
			lines = append([]string{"--- a/" + rel, "+++ b/" + rel}, lines[i:]...)
			break
		}
	}
	if len(lines) > maxDiffLines {
		n := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… %d more lines (ralph snapshot diff %s)", n, pre))
	}
	return strings.Join(lines, "\n")
}

// Restore puts each changed file back as the snapshot pre has it.
func Restore(ctx context.Context, snaps Snapshots, root, pre string, changes []Change) error {
	s, err := snaps.Resolve(ctx, pre)
	if err != nil {
		return fmt.Errorf("restore from %s: %w", pre, err)
	}
	var errs []error
	for _, c := range changes {
		if c.Added {
			// As pre has it: not there.
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(c.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", c.Path, err))
			}
			continue
		}
		b, err := snaps.ReadFile(ctx, pre, c.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		mode := fs.FileMode(0o644)
		if out, err := git.Line(ctx, root, "ls-tree", s.Commit, "--", c.Path); err == nil && strings.HasPrefix(out, "100755") {
			mode = 0o755
		}
		if err := workspace.WriteFileMode(filepath.Join(root, filepath.FromSlash(c.Path)), b, mode); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", c.Path, err))
		}
	}
	return errors.Join(errs...)
}

// Fingerprint identifies a set of changes by path and present content, so
// that an approval covers exactly what the person saw.
func Fingerprint(root string, changes []Change) string {
	h := sha256.New()
	for _, c := range changes {
		fmt.Fprintf(h, "%s\x00%t\x00", c.Path, c.Deleted)
		if c.Added {
			h.Write([]byte("added\x00"))
		}
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.Path))); err == nil {
			sum := sha256.Sum256(b)
			h.Write(sum[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Request is the text of the approval request for changes: each file with
// its diff, what approving and rejecting do, and how to allow such
// changes for good.
func Request(changes []Change, pre string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The agent changed %d file(s) the gates depend on (since %s):\n", len(changes), pre)
	for _, c := range changes {
		b.WriteString("\n" + c.Line() + "\n")
		if c.Diff != "" {
			b.WriteString(c.Diff + "\n")
		}
	}
	b.WriteString("\nApprove to run the gates with these changes; reject to put the files back as they were. ")
	b.WriteString("A task that must change tests can be let through for good with [guard] on_change = \"allow\" in ralph.toml.")
	return b.String()
}
