package copilot

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// runFake runs the backend with a fake copilot that prints testdata/NAME,
// saves its arguments, environment and the instructions file ralph gave
// it to the workspace, and writes a usage file where it is told to.
func runFake(t *testing.T, cfg agent.Config, name string) clitest.Run {
	t.Helper()
	return clitest.RunFake(t, newAgent, cfg, name, `
env > "$PWD/env"
dir=${COPILOT_CUSTOM_INSTRUCTIONS_DIRS##*,}
cat "$dir/.github/instructions/ralph.instructions.md" > "$PWD/system"
prev=""
for a in "$@"; do
	[ "$prev" = --usage-output-file ] && printf '%s' '{"modelMetrics":{"m":{"usage":{"inputTokens":300,"outputTokens":50,"reasoningTokens":10,"cacheReadTokens":7}}}}' > "$a"
	prev=$a
done`)
}

func TestMissingBinary(t *testing.T) {
	clitest.MissingBinary(t, newAgent, Available, InstallHint)
}

// FuzzParse: no input makes the parser panic, and the tool-call count
// matches the tool-call events.
func FuzzParse(f *testing.F) {
	clitest.FuzzParser(f, func() cliagent.Parser { return NewParser() })
}

func TestArgs(t *testing.T) {
	got := strings.Join(New(agent.Config{Model: "gpt-5.5", Args: []string{"--x"}}, nil).Args(agent.Request{Prompt: "P"}, "U"), " ")
	if want := "copilot -p P --output-format json --allow-all-tools --no-ask-user --no-auto-update --usage-output-file U --model gpt-5.5 --x"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
	got = strings.Join(New(agent.Config{PermissionMode: "allow-all"}, nil).Args(agent.Request{Prompt: "P"}, ""), " ")
	if want := "copilot -p P --output-format json --allow-all --no-ask-user --no-auto-update"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

// The recorded stream of the real Copilot CLI, replayed by a fake: the
// system prompt travels in an instructions directory added to the user's
// own, the prompt after -p, usage comes from the usage file, and the
// nested-agent variables do not reach it.
func TestRunSuccess(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	r := runFake(t, agent.Config{Env: []string{"COPILOT_CUSTOM_INSTRUCTIONS_DIRS=/users/own"}}, "real-success.jsonl")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Result.Final != "All done. <promise>COMPLETE</promise>" || r.Result.ToolCalls != 2 ||
		r.Result.Usage != (agent.Usage{InputTokens: 300, OutputTokens: 60, CacheReadTokens: 7}) {
		t.Errorf("result = %+v", r.Result)
	}
	if got := clitest.ReadFile(t, r.Dir, "system"); got != "RALPH-SYSTEM" {
		t.Errorf("instructions file = %q", got)
	}
	env := clitest.ReadFile(t, r.Dir, "env")
	if !strings.Contains(env, "COPILOT_CUSTOM_INSTRUCTIONS_DIRS=/users/own,") || strings.Contains(env, "CLAUDECODE=") {
		t.Errorf("env = %s", env)
	}
	if args := clitest.ReadFile(t, r.Dir, "args"); !strings.HasPrefix(args, "-p\nRALPH-TASK\n") {
		t.Errorf("args = %q", args)
	}
	if n := len(r.Events); n == 0 || r.Events[n-1].Kind != agent.KindUsage {
		t.Errorf("the last event is not the usage: %s", clitest.Kinds(r.Events))
	}
}

func TestRunRateLimited(t *testing.T) {
	clitest.WantRateLimit(t, runFake(t, agent.Config{}, "real-ratelimit.jsonl").Err, "429 You exceeded your current quota")
}
