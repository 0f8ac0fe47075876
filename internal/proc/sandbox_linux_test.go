package proc

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// A confined program and everything it starts may write its workspace
// only: a read of a file outside it and a write outside it fail with
// EACCES, the write inside succeeds; neither the ruleset's descriptor nor
// its variable reaches the program, and ralph (the test binary) stays
// unconfined.
func TestRunSandboxConfinesProgramAndChildren(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o600)
	pol := sandbox.Policy{Read: []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}, Write: []string{ws}, Devices: []string{"/dev"}}
	rs := ruleset(t, pol)
	for _, warm := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "persistent"}[warm], func(t *testing.T) {
			os.Remove(filepath.Join(ws, "inside"))
			confinedRun(t, rs, warm, secret, ws, outside)
		})
	}
}

// confinedRun runs the confining test's program once, on the persistent
// supervisor when warm.
func confinedRun(t *testing.T, rs *os.File, warm bool, secret, ws, outside string) {
	if warm {
		supervisorPID(t)
	} else {
		coldStart(t)
	}
	before := persistentStarts.Load()
	var out []string
	script := `cat "$1"; echo x > "$2/escaped"; sh -c 'echo in > inside'; env | grep -c RALPH_SANDBOX_FD; [ -e /proc/$$/fd/3 ] && echo leaked-fd; [ -e /proc/$$/fd/4 ] && echo leaked-fd; true`
	res, err := Run(context.Background(), Spec{
		Argv: []string{"sh", "-c", script, "sh", secret, outside}, Dir: ws,
		OnLine: func(l string) { out = append(out, l) }, Ruleset: rs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if warm && persistentStarts.Load() != before+1 {
		t.Fatal("the program did not start on the persistent supervisor")
	}
	if strings.Contains(strings.Join(out, "\n"), "s3cret") || !strings.Contains(res.Stderr, secret+": Permission denied") {
		t.Errorf("the secret was read: out %q, stderr %q", out, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Errorf("the program wrote outside its workspace")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside")); err != nil || string(b) != "in\n" {
		t.Errorf("the child's write inside = %q, %v", b, err)
	}
	if len(out) == 0 || out[len(out)-1] != "0" {
		t.Errorf("RALPH_SANDBOX_FD or the ruleset reached the program: %q", out)
	}
	if _, err := os.ReadFile(secret); err != nil {
		t.Errorf("ralph itself was confined: %v", err)
	}
}

// On the persistent supervisor a ruleset confines its own program only:
// while a confined program runs (and after it), a program started after it
// unconfined may write where the confined one may not, and one confined by
// another ruleset may write its own grant and not the first one's. Each
// ends confined or not as its own ruleset says, whatever ran before on the
// supervisor's threads.
func TestRunSandboxConfinesOnlyItsProgram(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	sup := supervisorPID(t)
	a, b, outside := t.TempDir(), t.TempDir(), t.TempDir()
	read := []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}
	rsA := ruleset(t, sandbox.Policy{Read: read, Write: []string{a}, Devices: []string{"/dev"}})
	rsB := ruleset(t, sandbox.Policy{Read: read, Write: []string{b}, Devices: []string{"/dev"}})
	// write tries each directory and prints which it could write, after
	// its parent's pid.
	write := func(name string) string {
		return `echo $PPID; for d in "$@"; do echo x 2>/dev/null > "$d/` + name + `" && echo "$d"; done; true`
	}
	type run struct {
		name string
		rs   *os.File
		want []string
	}
	runOne := func(r run) {
		t.Helper()
		var out []string
		res, err := Run(context.Background(), Spec{
			Argv: []string{"sh", "-c", write(r.name), "sh", a, b, outside}, Dir: a,
			OnLine: func(l string) { out = append(out, l) }, Ruleset: r.rs,
		})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %v, exit %d, stderr %q", r.name, err, res.ExitCode, res.Stderr)
		}
		want := append([]string{strconv.Itoa(sup)}, r.want...)
		if strings.Join(out, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: parent and writable directories %q, want %q", r.name, out, want)
		}
	}
	// The first confined program keeps running (holding its thread's
	// domain, if any were kept) while the others start.
	stdin, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	held := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "read x"}, Stdin: stdin, Ruleset: rsA})
		held <- err
	}()
	for i := range 3 {
		runOne(run{"confined-a" + strconv.Itoa(i), rsA, []string{a}})
		runOne(run{"open" + strconv.Itoa(i), nil, []string{a, b, outside}})
		runOne(run{"confined-b" + strconv.Itoa(i), rsB, []string{b}})
	}
	release.Close()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	runOne(run{"open-after", nil, []string{a, b, outside}})
}

// A ruleset the supervisor cannot enforce (here a file that is none)
// fails the program's start, with the reason on standard error; it never
// runs unconfined.
func TestRunSandboxUnappliedNeverRunsUnconfined(t *testing.T) {
	ws := t.TempDir()
	notRuleset, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer notRuleset.Close()
	for _, warm := range []bool{false, true} {
		if warm {
			supervisorPID(t)
		} else {
			KeepSupervisor(false)
		}
		res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo ran > ran"}, Dir: ws, Ruleset: notRuleset})
		KeepSupervisor(true)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 126 || strings.Count(res.Stderr, "sandbox: landlock_restrict_self") != 1 {
			t.Errorf("warm %v: exit %d, stderr %q", warm, res.ExitCode, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Errorf("warm %v: the program ran", warm)
		}
	}
}

// Without a supervisor (RunSupervisor not called, or no /proc) a confined
// program is refused rather than started directly.
func TestRunSandboxNeedsSupervisor(t *testing.T) {
	canSupervise.Store(false)
	defer canSupervise.Store(true)
	_, err := Run(context.Background(), Spec{Argv: []string{"true"}, Ruleset: os.Stdin})
	if !errors.Is(err, errNoSupervisor) {
		t.Errorf("err = %v, want errNoSupervisor", err)
	}
}

// With network "model" a confined program may connect over TCP only to
// the ports the policy names, and may not listen on any.
func TestRunSandboxNetworkModelPorts(t *testing.T) {
	if st := sandbox.Probe(); !st.Available() || st.ABI < 4 {
		t.Skip("no Landlock ABI 4 here")
	}
	// The system's python3: one under $HOME (pyenv) is out of reach.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 to make connections")
	}
	allowed, other := listen(t), listen(t)
	pol := sandbox.Policy{Read: []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}, Write: []string{t.TempDir()}, Devices: []string{"/dev"}, Ports: []uint16{443, port(allowed)}}
	script := `
import socket, sys
def connect(p):
    try:
        socket.create_connection(("127.0.0.1", p), timeout=5).close(); return "ok"
    except OSError as e:
        return e.__class__.__name__
def bind():
    try:
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); return "ok"
    except OSError as e:
        return e.__class__.__name__
print(connect(int(sys.argv[1])), connect(int(sys.argv[2])), bind())
`
	var out []string
	res, err := Run(context.Background(), Spec{
		Argv:   []string{python, "-c", script, strconv.Itoa(int(port(allowed))), strconv.Itoa(int(port(other)))},
		OnLine: func(l string) { out = append(out, l) }, Ruleset: ruleset(t, pol),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out, "\n"); got != "ok PermissionError PermissionError" {
		t.Errorf("connect allowed, connect other, listen = %q; want ok PermissionError PermissionError\nstderr: %s", got, res.Stderr)
	}
}

func listen(t *testing.T) net.Listener {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}

func port(l net.Listener) uint16 { return uint16(l.Addr().(*net.TCPAddr).Port) }

// ruleset makes p's ruleset, closed when the test ends.
func ruleset(t *testing.T, p sandbox.Policy) *os.File {
	t.Helper()
	f, err := p.Ruleset()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A policy's ruleset is made once and used again for the calls after
// (sandbox keeps it), but not once a path of the policy leads to another
// file: a workspace removed and made again, which a kept ruleset would
// hold as the directory it was, is writable by the next confined program;
// and the directory that was removed, moved back in sight, is not.
func TestRunSandboxRulesetFollowsAWorkspaceMadeAgain(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	supervisorPID(t)
	root := t.TempDir()
	ws, old := filepath.Join(root, "ws"), filepath.Join(root, "old")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := sandbox.Policy{Read: []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}, Write: []string{ws}, Devices: []string{"/dev"}}
	// write reports which of its directories the confined program could
	// write.
	write := func() []string {
		t.Helper()
		rs := ruleset(t, pol)
		var out []string
		res, err := Run(context.Background(), Spec{
			Argv:   []string{"sh", "-c", `for d in "$@"; do echo x 2>/dev/null > "$d/f" && echo "$d"; done; true`, "sh", ws, old},
			Dir:    root,
			OnLine: func(l string) { out = append(out, l) }, Ruleset: rs,
		})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
		}
		return out
	}
	for range 2 {
		if got := write(); strings.Join(got, ",") != ws {
			t.Fatalf("wrote %q, want only the workspace", got)
		}
	}
	if err := os.Rename(ws, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := write(); strings.Join(got, ",") != ws {
		t.Errorf("after the workspace was made again, wrote %q, want only the new workspace", got)
	}
}

// A path of the policy beneath a writable directory is one the agent can
// replace: a symbolic link it put there, to a directory outside, grants
// nothing outside, though the policy names the link's path to read.
func TestRunSandboxIgnoresALinkPlantedBeneathTheWorkspace(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	supervisorPID(t)
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "tools")); err != nil {
		t.Fatal(err)
	}
	pol := sandbox.Policy{Read: []string{"/usr", "/bin", "/lib", "/lib64", "/etc", filepath.Join(ws, "tools")}, Write: []string{ws}, Devices: []string{"/dev"}}
	var out []string
	res, err := Run(context.Background(), Spec{
		Argv: []string{"sh", "-c", `cat tools/secret; echo in > inside && echo wrote`}, Dir: ws,
		OnLine: func(l string) { out = append(out, l) }, Ruleset: ruleset(t, pol),
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(out, "\n"), "s3cret") || !strings.Contains(res.Stderr, "Permission denied") {
		t.Errorf("the secret was read through the link: out %q, stderr %q", out, res.Stderr)
	}
	if !slices.Contains(out, "wrote") {
		t.Errorf("the workspace was not writable: out %q, stderr %q", out, res.Stderr)
	}
}
