package opencode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// realConfig returns a Config running the real opencode against srv from
// an isolated HOME, its provider given the way a user gives it in
// ralph.toml: OPENCODE_CONFIG_CONTENT in [agents.opencode] env.
func realConfig(t *testing.T, srv *testutil.ChatServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.OpencodeBin(t), record)
	env := append(testutil.OpencodeEnv(t), "OPENCODE_CONFIG_CONTENT="+srv.OpencodeConfig())
	return agent.Config{Binary: bin, Env: env}
}

// The real opencode, with the user's provider in OPENCODE_CONFIG_CONTENT
// and ralph's system prompt merged into it, writes a file and runs a
// command; the events carry both with their input and result, and usage.
func TestRealOpencodeWritesFile(t *testing.T) {
	clitest.WritesFile(t, clitest.WriteFile[*testutil.ChatServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewChat,
		Config:    realConfig,
		Record:    "real-success.jsonl",
		WriteTool: "write", ShellTool: "bash",
		Usage: func(u agent.Usage) bool { return u.InputTokens > 0 && u.OutputTokens > 0 },
	})
}

// A write outside the workspace is refused by ralph's explicit permission
// rule: the real opencode reports it as a failed tool call, the model
// sees the refusal and goes on, and the run ends normally — opencode's own
// default ("ask", which a headless run treats as the user rejecting and
// stops the session) would have lost the rest of the turn.
func TestRealOpencodeDeniedWriteIsToolError(t *testing.T) {
	dir := testutil.GitRepo(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	srv := testutil.NewChat(t,
		testutil.Calls("I will write outside.", testutil.WriteFile(outside, "nope\n")),
		testutil.Text("The write was refused, so I stopped."),
	)
	res, ev, err := clitest.RunReal(t, newAgent, realConfig(t, srv, "real-denied.jsonl"), agent.Request{Dir: dir, Prompt: "write outside"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the file outside the workspace exists (stat: %v)", err)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 1 || !results[0].IsError || results[0].Tool != "write" {
		t.Fatalf("tool results = %+v, want one failed write", results)
	}
	t.Logf("refusal: %s", results[0].Text)
	if res.Final != "The write was refused, so I stopped." || srv.Remaining() != 0 {
		t.Errorf("final = %q, turns left %d: the session did not go on after the refusal", res.Final, srv.Remaining())
	}
}
