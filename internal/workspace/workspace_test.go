package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/filelock"
)

func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ws, err := Open(context.Background(), filepath.Join(dir))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// Seed 001's state tests: the phase defaults to plan when phase.txt is
// missing, reads back what was set, and init writes "plan".
func TestPhase(t *testing.T) {
	ws := newWorkspace(t)
	if got := ws.Phase(); got != PhasePlan {
		t.Errorf("phase without phase.txt = %q, want plan", got)
	}
	if err := ws.SetPhase(PhaseBuild); err != nil {
		t.Fatal(err)
	}
	if got := ws.Phase(); got != PhaseBuild {
		t.Errorf("phase after SetPhase(build) = %q", got)
	}
	ws.Write(Phase, "garbage\n")
	if got := ws.Phase(); got != PhasePlan {
		t.Errorf("garbage phase reads as %q, want plan", got)
	}
}

func TestInitCreatesStateFilesAndIgnoresPrivateOnes(t *testing.T) {
	ws := newWorkspace(t)
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{Phase: "plan", Status: "running", Iteration: "0", TaskCounter: "0"} {
		if got, _ := ws.Read(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// The private files are ignored by git; the agent-facing ones are not.
	os.WriteFile(ws.Path(Database), []byte("db"), 0o644)
	os.WriteFile(ws.Path(LockFile), []byte("1"), 0o644)
	os.WriteFile(ws.Path("logs/x.log"), []byte("log"), 0o644)
	out, err := exec.Command("git", "-C", ws.Root, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		t.Fatal(err)
	}
	st := string(out)
	for _, private := range []string{Database, LockFile, "logs/"} {
		if strings.Contains(st, ".ralph/"+private) {
			t.Errorf("git sees private file %s:\n%s", private, st)
		}
	}
	if !strings.Contains(st, ".ralph/phase.txt") {
		t.Errorf("git does not see phase.txt:\n%s", st)
	}
	// Init twice leaves existing state alone.
	ws.SetPhase(PhaseBuild)
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if ws.Phase() != PhaseBuild {
		t.Error("a second init reset the phase")
	}
}

func TestOpenOutsideGit(t *testing.T) {
	_, err := Open(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNotGitRepo) {
		t.Fatalf("err = %v, want ErrNotGitRepo", err)
	}
}

func TestLockIsExclusiveAndNamesHolder(t *testing.T) {
	ws := newWorkspace(t)
	l, err := ws.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if pid := ws.HolderPID(); pid != os.Getpid() {
		t.Errorf("holder pid = %d, want %d", pid, os.Getpid())
	}
	// A second lock, even in the same process, fails at once.
	_, err = ws.Lock()
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if pid := ws.HolderPID(); pid != 0 {
		t.Errorf("holder after release = %d", pid)
	}
	l2, err := ws.Lock()
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
}

// A lock still held for a moment after its recorded holder died (a child
// of a ralph killed while starting it, until its exec) is waited for, not
// reported as held by the dead pid.
func TestLockWaitsOutADeadHolder(t *testing.T) {
	ws := newWorkspace(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ws.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ws.Path(LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := filelock.TryLock(f); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strconv.Itoa(dead.Process.Pid) + "\n"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		filelock.Unlock(f)
		close(released)
	}()
	l, err := ws.Lock()
	if err != nil {
		t.Fatalf("lock with a dead holder: %v", err)
	}
	select {
	case <-released:
	default:
		t.Error("Lock succeeded while the lock was still held")
	}
	if pid := ws.HolderPID(); pid != os.Getpid() {
		t.Errorf("holder pid = %d, want %d", pid, os.Getpid())
	}
	l.Release()
}

func TestWriteIsAtomic(t *testing.T) {
	ws := newWorkspace(t)
	ws.Init()
	if err := ws.Write(Feedback, "first"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Append(Feedback, " second"); err != nil {
		t.Fatal(err)
	}
	if got, _ := ws.Read(Feedback); got != "first second" {
		t.Errorf("feedback = %q", got)
	}
	entries, _ := os.ReadDir(ws.StateDir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// Init adds to an older .ralph/.gitignore the private files it lacks,
// keeping the user's own lines, and adds nothing the second time.
func TestInitCompletesOldGitignore(t *testing.T) {
	ws := newWorkspace(t)
	old := "# mine\n/ralph.db\n/ralph.lock\n/logs/\nscratch/"
	if err := ws.Write(".gitignore", old); err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	got, _ := ws.Read(".gitignore")
	if !strings.HasPrefix(got, old+"\n") {
		t.Errorf(".gitignore lost its lines:\n%s", got)
	}
	for _, p := range Private {
		if n := strings.Count("\n"+got, "\n"+p+"\n"); n != 1 {
			t.Errorf(".gitignore lists %s %d times:\n%s", p, n, got)
		}
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	if again, _ := ws.Read(".gitignore"); again != got {
		t.Errorf("second Init changed .gitignore:\n%s", again)
	}
}

// WriteFileMode replaces a file that exists with the mode it is given,
// not the old file's, and leaves no temporary file behind.
func TestWriteFileModeReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "serve.token")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileMode(p, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "new\n" {
		t.Errorf("content = %q", data)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("entries = %v", entries)
	}
}

func TestInside(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "src", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"src/index.css", true},
		{"src/new/dir/index.css", true},
		{"alias/index.css", true}, // a link that stays inside
		{filepath.Join(root, "src", "a.css"), true},
		{"../x.css", false},
		{"src/../../x.css", false},
		{"src/out/evil.css", false},     // a link that leads out
		{"src/out/new/evil.css", false}, // through a link, to a path that does not exist yet
		{"/etc/x.css", false},
	} {
		_, err := Inside(root, tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("Inside(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrOutside) {
			t.Errorf("Inside(%q): %v is not ErrOutside", tc.path, err)
		}
	}
}
