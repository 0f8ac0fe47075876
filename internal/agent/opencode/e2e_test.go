package opencode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func run(t *testing.T, cfg agent.Config, req agent.Request) (agent.Result, *clitest.Events, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ev clitest.Events
	if req.IdleTimeout == 0 {
		req.IdleTimeout = time.Minute
	}
	res, err := New(cfg, nil).Run(ctx, req, ev.Emit)
	return res, &ev, err
}

// The real opencode, with the user's provider in OPENCODE_CONFIG_CONTENT
// and ralph's system prompt merged into it, writes a file and runs a
// command; the events carry both with their input and result, and usage.
func TestRealOpencodeWritesFile(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewChat(t,
		testutil.Calls("I will write the file.", testutil.WriteFile(filepath.Join(dir, "hello.txt"), "hello world\n")),
		testutil.Calls("", testutil.Shell("cat", "hello.txt")),
		testutil.Text("All done. <promise>COMPLETE</promise>"),
	)
	res, ev, err := run(t, realConfig(t, srv, "real-success.jsonl"), agent.Request{
		Dir: dir, System: "RALPH-SYSTEM: follow the \"plan\".\nSecond line.", Prompt: "RALPH-TASK: write hello.txt",
	})
	if err != nil {
		t.Fatalf("%v\nrequests: %d", err, len(srv.Requests()))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, %v\nevents: %+v", b, err, ev.Of(agent.KindToolResult))
	}
	calls := ev.Of(agent.KindToolCall)
	if len(calls) != 2 || calls[0].Tool != "write" || calls[1].Tool != "bash" {
		t.Fatalf("tool calls = %+v", calls)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 2 || results[0].IsError || results[1].IsError || !strings.Contains(results[1].Text, "hello world") {
		t.Errorf("tool results = %+v", results)
	}
	if res.ToolCalls != 2 || !strings.Contains(res.Final, "<promise>COMPLETE</promise>") {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.InputTokens <= 0 || res.Usage.OutputTokens <= 0 {
		t.Errorf("usage = %+v", res.Usage)
	}
	reqs := srv.Scripted()
	if len(reqs) != 3 {
		t.Fatalf("scripted requests = %d, want 3", len(reqs))
	}
	if !strings.Contains(reqs[0].System, "RALPH-SYSTEM: follow the \"plan\".\nSecond line.") {
		t.Errorf("system prompt does not carry ralph's: %.300q", reqs[0].System)
	}
	if strings.Contains(reqs[0].UserText, "RALPH-SYSTEM") || !strings.Contains(reqs[0].UserText, "RALPH-TASK: write hello.txt") {
		t.Errorf("user text = %.500q", reqs[0].UserText)
	}
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
	res, ev, err := run(t, realConfig(t, srv, "real-denied.jsonl"), agent.Request{Dir: dir, Prompt: "write outside"})
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
