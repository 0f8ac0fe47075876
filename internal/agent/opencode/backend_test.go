package opencode

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// runFake runs the backend with a fake opencode that prints testdata/NAME
// and saves its arguments, OPENCODE_CONFIG_CONTENT and the instructions
// file it names to the workspace.
func runFake(t *testing.T, name string) clitest.Run {
	t.Helper()
	return clitest.RunFake(t, newAgent, agent.Config{}, name, `
printf '%s' "$OPENCODE_CONFIG_CONTENT" > "$PWD/config"
f=$(printf '%s' "$OPENCODE_CONFIG_CONTENT" | sed -n 's/.*"instructions":\["\([^"]*\)".*/\1/p')
[ -n "$f" ] && cat "$f" > "$PWD/system"`)
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
	got := strings.Join(New(agent.Config{Model: "anthropic/claude-sonnet-4-5"}, nil).Args(agent.Request{Prompt: "P"}), " ")
	if want := "opencode run --format json --model anthropic/claude-sonnet-4-5 P"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

func TestRunSuccess(t *testing.T) {
	r := runFake(t, "success.jsonl")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	evs, res := r.Events, r.Result
	clitest.WantKinds(t, evs, "text tool_call:write tool_result:write usage tool_call:bash tool_result:bash text usage")
	if !evs[5].IsError || evs[2].IsError || !strings.Contains(string(evs[1].Input), `"filePath":"/work/hello.txt"`) {
		t.Errorf("tool events = %+v", evs[1:6])
	}
	if res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 2 ||
		res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 60 ||
		res.Usage.CacheReadTokens != 50 || res.Usage.CacheWriteTokens != 5 || res.Usage.CostUSD < 0.0029 || res.Usage.CostUSD > 0.0031 {
		t.Errorf("result = %+v", res)
	}
	if b := clitest.ReadFile(t, r.Dir, "config"); !strings.Contains(b, `"instructions":["`) {
		t.Errorf("OPENCODE_CONFIG_CONTENT = %q", b)
	}
	if b := clitest.ReadFile(t, r.Dir, "system"); b != "RALPH-SYSTEM" {
		t.Errorf("the instructions file held %q", b)
	}
	if b := clitest.ReadFile(t, r.Dir, "args"); !strings.HasSuffix(b, "\nRALPH-TASK\n") {
		t.Errorf("args = %q", b)
	}
}

func TestRunRateLimited(t *testing.T) {
	if rl := clitest.WantRateLimit(t, runFake(t, "ratelimit.jsonl").Err, ""); rl.ResetAt.IsZero() {
		t.Fatalf("err = %v, want a RateLimitError with a reset time", rl)
	}
}

func TestMergeConfig(t *testing.T) {
	ralph := map[string]any{
		"instructions": []string{"/tmp/ralph.md"},
		"permission":   map[string]any{"external_directory": "deny", "doom_loop": "deny"},
	}
	for _, tc := range []struct{ name, user, want string }{
		{"no user config", "",
			`{"instructions":["/tmp/ralph.md"],"permission":{"doom_loop":"deny","external_directory":"deny"}}`},
		{"the user's provider kept", `{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible"}},"model":"fake/m"}`,
			`{"instructions":["/tmp/ralph.md"],"model":"fake/m","permission":{"doom_loop":"deny","external_directory":"deny"},"provider":{"fake":{"npm":"@ai-sdk/openai-compatible"}}}`},
		{"instructions joined", `{"instructions":["AGENTS.md"]}`,
			`{"instructions":["AGENTS.md","/tmp/ralph.md"],"permission":{"doom_loop":"deny","external_directory":"deny"}}`},
		{"the user's permission wins", `{"permission":{"external_directory":"allow","bash":"ask"}}`,
			`{"instructions":["/tmp/ralph.md"],"permission":{"bash":"ask","doom_loop":"deny","external_directory":"allow"}}`},
	} {
		got, err := MergeConfig(tc.user, ralph)
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.name, got, err, tc.want)
		}
	}
	if _, err := MergeConfig(`{"model": `, ralph); err == nil || !strings.Contains(err.Error(), "OPENCODE_CONFIG_CONTENT") {
		t.Errorf("bad JSON: err = %v", err)
	}
	if _, err := MergeConfig(" null ", ralph); err == nil || !strings.Contains(err.Error(), "OPENCODE_CONFIG_CONTENT") {
		t.Errorf("null config: err = %v", err)
	}
}

// The user's OPENCODE_CONFIG_CONTENT from [agents.opencode] env reaches
// opencode merged with ralph's, once.
func TestRunMergesUserConfig(t *testing.T) {
	r := clitest.RunFake(t, newAgent, agent.Config{Env: []string{`OPENCODE_CONFIG_CONTENT={"model":"fake/m"}`}}, "success.jsonl",
		`printf '%s' "$OPENCODE_CONFIG_CONTENT" > "$PWD/config"`)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	b := clitest.ReadFile(t, r.Dir, "config")
	for _, want := range []string{`"model":"fake/m"`, `"instructions":["`, `"external_directory":"deny"`} {
		if !strings.Contains(b, want) {
			t.Errorf("OPENCODE_CONFIG_CONTENT = %s, lacks %s", b, want)
		}
	}
}
