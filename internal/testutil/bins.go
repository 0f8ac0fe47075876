package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot returns the root of the ralph repository (the directory with
// go.mod above this package).
func RepoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testutil: cannot find the repository root")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ClaudeBin returns the real Claude Code binary: $RALPH_CLAUDE_BIN, or the
// one scripts/install-agent-clis.sh installed. See AgentBin.
func ClaudeBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_CLAUDE_BIN", "claude")
}

// CodexBin returns the real Codex binary: $RALPH_CODEX_BIN, or the one
// scripts/install-agent-clis.sh installed. See AgentBin.
func CodexBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_CODEX_BIN", "codex")
}

// AgentBin returns the path of an agent CLI named by the variable envVar,
// or <repo>/.cache/agent-clis/node_modules/.bin/NAME. When it is missing
// the test is skipped — or fails when CI is set, so that no skipped test
// hides a failure there.
func AgentBin(t testing.TB, envVar, name string) string {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		path = filepath.Join(RepoRoot(t), ".cache", "agent-clis", "node_modules", ".bin", name)
	}
	if _, err := exec.LookPath(path); err != nil {
		msg := name + " CLI not installed (run scripts/install-agent-clis.sh or set " + envVar + "): " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// GitRepo creates a temporary git repository with one commit and returns
// its path.
func GitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "ralph@example.invalid"},
		{"config", "user.name", "ralph test"},
		{"commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// OpencodeBin returns the real opencode binary: $RALPH_OPENCODE_BIN, or
// the one scripts/install-agent-clis.sh installed. See AgentBin.
func OpencodeBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_OPENCODE_BIN", "opencode")
}

// GeminiBin returns the real Gemini CLI binary: $RALPH_GEMINI_BIN, or the
// one scripts/install-agent-clis.sh installed. See AgentBin.
func GeminiBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_GEMINI_BIN", "gemini")
}

// QwenBin returns the real Qwen Code binary: $RALPH_QWEN_BIN, or the one
// scripts/install-agent-clis.sh installed. See AgentBin.
func QwenBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_QWEN_BIN", "qwen")
}

// CopilotBin returns the real GitHub Copilot CLI binary: $RALPH_COPILOT_BIN,
// or the one scripts/install-agent-clis.sh installed. See AgentBin.
func CopilotBin(t testing.TB) string {
	t.Helper()
	return AgentBin(t, "RALPH_COPILOT_BIN", "copilot")
}
