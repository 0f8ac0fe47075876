package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// A confined program and everything it starts may write its workspace
// only: a read of a file outside it and a write outside it fail with
// EACCES, the write inside succeeds; the policy does not reach the
// program's environment, and ralph (the test binary) stays unconfined.
func TestRunSandboxConfinesProgramAndChildren(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o600)
	pol := sandbox.Policy{Read: []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}, Write: []string{ws}, Devices: []string{"/dev"}}
	var out []string
	script := `cat "$1"; echo x > "$2/escaped"; sh -c 'echo in > inside'; env | grep -c RALPH_SANDBOX_POLICY; true`
	res, err := Run(context.Background(), Spec{
		Argv: []string{"sh", "-c", script, "sh", secret, outside}, Dir: ws,
		OnLine: func(l string) { out = append(out, l) }, Sandbox: pol.Encode(),
	})
	if err != nil {
		t.Fatal(err)
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
		t.Errorf("RALPH_SANDBOX_POLICY reached the program: %q", out)
	}
	if _, err := os.ReadFile(secret); err != nil {
		t.Errorf("ralph itself was confined: %v", err)
	}
}

// A policy the supervisor cannot apply fails the program's start, with
// the reason on standard error; it never runs unconfined.
func TestRunSandboxUnappliedNeverRunsUnconfined(t *testing.T) {
	t.Setenv(sandbox.NoLandlockEnv, "1")
	ws := t.TempDir()
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo ran > ran"}, Dir: ws, Sandbox: sandbox.Policy{Write: []string{ws}}.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 126 || !strings.Contains(res.Stderr, "sandbox: this kernel has no Landlock") {
		t.Errorf("exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Errorf("the program ran")
	}
}

// Without a supervisor (RunSupervisor not called, or no /proc) a confined
// program is refused rather than started directly.
func TestRunSandboxNeedsSupervisor(t *testing.T) {
	canSupervise.Store(false)
	defer canSupervise.Store(true)
	_, err := Run(context.Background(), Spec{Argv: []string{"true"}, Sandbox: sandbox.Policy{}.Encode()})
	if !errors.Is(err, errNoSupervisor) {
		t.Errorf("err = %v, want errNoSupervisor", err)
	}
}
