package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// specsBuild builds the ralph binary into a temporary folder.
func specsBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the ralph binary")
	}
	bin := filepath.Join(t.TempDir(), "ralph")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/ralph")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func specsGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func specsWrite(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// specsLogs lists every run log of a spec, as runs/<id>/<ts>/<name>.
func specsLogs(dir, id string) []string {
	logs, _ := filepath.Glob(filepath.Join(dir, ".ralph", "logs", "specs", "runs", id, "*", "*.log"))
	return logs
}

// specsStartAndKill starts ralph specs run, waits for a run log called
// name to appear and kills the process with SIGKILL.
func specsStartAndKill(t *testing.T, bin, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"specs", "run"}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		found := false
		for _, l := range specsLogs(dir, "0001-foo") {
			found = found || filepath.Base(l) == name
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no %s within 30s; output:\n%s", name, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("killed during %s; output so far:\n%s", name, out.String())
}

// TestSpecsKillNineResumes kills ralph specs run with SIGKILL while the
// implementer works, runs it again (it implements again, never re-plans),
// kills it while the verifier works, and runs it a third time (it resumes
// at verification of the recorded candidate).
func TestSpecsKillNineResumes(t *testing.T) {
	bin := specsBuild(t)
	dir := t.TempDir()
	specsGit(t, dir, "init", "-q")
	specsGit(t, dir, "config", "user.name", "ralph test")
	specsGit(t, dir, "config", "user.email", "test@ralph.invalid")
	specsWrite(t, dir, "specs/0001-foo.md", "# Foo\n\nWrite foo.txt.\n")
	specsWrite(t, dir, "ralph.toml", "[specs]\nbackoff = \"0s\"\n")
	// The planner's second entry would wreck the plan: it must never run.
	specsWrite(t, dir, "planner.json", `{"iterations": [
		{"actions": [{"tool": "write", "path": "specs/plans/0001-foo.md", "content": "# Plan\n1. foo.txt\n"}], "final": "<promise>COMPLETE</promise>"},
		{"actions": [{"tool": "write", "path": "specs/plans/0001-foo.md", "content": "# RE-PLANNED\n"}], "final": "<promise>COMPLETE</promise>"}]}`)
	specsWrite(t, dir, "implementer.json", `{"iterations": [
		{"actions": [{"tool": "sleep", "seconds": 120}], "final": "never"},
		{"actions": [{"tool": "write", "path": "foo.txt", "content": "foo\n"}, {"tool": "shell", "argv": ["git", "add", "-A"]}, {"tool": "shell", "argv": ["git", "commit", "-qm", "foo"]}], "final": "<promise>COMPLETE</promise>"},
		{"actions": [], "final": "must not run a third time"}]}`)
	specsWrite(t, dir, "verifier.json", `{"iterations": [
		{"actions": [{"tool": "sleep", "seconds": 120}], "final": "never"},
		{"actions": [], "final": "foo.txt is there.\n<promise>PASS</promise>"}]}`)
	specsGit(t, dir, "add", "-A")
	specsGit(t, dir, "commit", "-qm", "init")
	args := []string{"--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json"}

	specsStartAndKill(t, bin, dir, "impl-attempt-1.log", args...)
	if _, err := os.Stat(filepath.Join(dir, "specs/plans/0001-foo.json")); err != nil {
		t.Fatalf("no active plan before the kill: %v", err)
	}
	specsStartAndKill(t, bin, dir, "verify.log", args...)
	if _, err := os.Stat(filepath.Join(dir, "specs/candidates/0001-foo.json")); err != nil {
		t.Fatalf("no candidate before the second kill: %v", err)
	}

	cmd := exec.Command(bin, append([]string{"specs", "run"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("third run: %v\n%s", err, out)
	}
	t.Logf("third run:\n%s", out)
	if !strings.Contains(string(out), "verifying") || strings.Contains(string(out), "planning") || strings.Contains(string(out), "implementing") {
		t.Errorf("third run did not resume at verify:\n%s", out)
	}
	var names []string
	for _, l := range specsLogs(dir, "0001-foo") {
		names = append(names, filepath.Base(l))
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"plan-attempt-1.log", "impl-attempt-1.log", "impl-attempt-2.log", "verify.log"} {
		if !strings.Contains(got, want) {
			t.Errorf("logs %s lack %s", got, want)
		}
	}
	if strings.Contains(got, "plan-attempt-2.log") || strings.Contains(got, "impl-attempt-3.log") {
		t.Errorf("an active plan was re-planned or a candidate re-implemented: %s", got)
	}
	if plan, _ := os.ReadFile(filepath.Join(dir, "specs/plans/0001-foo.md")); strings.Contains(string(plan), "RE-PLANNED") {
		t.Error("the plan was replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, "specs/done/0001-foo.md")); err != nil {
		t.Errorf("not done: %v", err)
	}
	status := exec.Command(bin, "specs", "status")
	status.Dir = dir
	sout, _ := status.CombinedOutput()
	if !regexp.MustCompile(`0001-foo\.md\s+done\s+1\s+2\s+verified`).Match(sout) {
		t.Errorf("status:\n%s", sout)
	}
}
