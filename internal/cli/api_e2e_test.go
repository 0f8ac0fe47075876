package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/testutil"
)

const apiPlan = `<App name="Tideline">
  <Theme mood="northern-lights" />
  <Screen name="home">
    <Section gumdrop="hero" />
    <Section gumdrop="features" />
    <Section gumdrop="cta" />
  </Screen>
</App>
`

// apiTurns scripts a model that plans in iteration 1 and builds in
// iteration 2, using ralph's own tools.
func apiTurns() []testutil.Turn {
	return []testutil.Turn{
		testutil.Calls("I'll plan first.", testutil.RawCall("write_file", map[string]any{"path": ".ralph/plan.tsx", "content": apiPlan})),
		testutil.Text("The plan is written; the harness will validate it."),
		testutil.Calls("Building the hero.",
			testutil.RawCall("write_file", map[string]any{"path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Tides</h1>\n"}),
			testutil.RawCall("write_file", map[string]any{"path": "src/App.tsx", "content": "import { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"}),
			testutil.RawCall("run", map[string]any{"argv": []string{"ls", "src/sections"}})),
		testutil.Calls("Wrapping up.",
			testutil.RawCall("write_file", map[string]any{"path": ".ralph/summary.md", "content": "Built the Tideline hero\n"}),
			testutil.RawCall("write_file", map[string]any{"path": ".ralph/status.txt", "content": "complete"})),
		testutil.Text("Done. <promise>COMPLETE</promise>"),
	}
}

// runInProcess runs ralph's Main in dir and returns its exit code and output.
func runInProcess(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &out)
	return code, out.String()
}

// The built-in api agent completes a full ralph run — plan, validation,
// build, gates — against fake Anthropic and OpenAI-compatible servers, and
// the store holds the tool calls it made.
func TestAPIAgentFullRun(t *testing.T) {
	cases := []struct {
		name     string
		provider string
		start    func(t *testing.T) (baseURL string, requests func() []testutil.Request)
		// parser is the [task] parser setting; the OpenAI case lets the
		// model write task.md (Option A) with its first turn.
		parser string
		option string
	}{
		{"anthropic", "anthropic", func(t *testing.T) (string, func() []testutil.Request) {
			s := testutil.NewAnthropic(t, apiTurns()...)
			return s.URL(), s.Requests
		}, "template", "written from the template"},
		{"openai", "openai", func(t *testing.T) (string, func() []testutil.Request) {
			taskJSON, _ := json.Marshal(map[string]any{
				"type": "fresh", "title": "Tideline landing page",
				"requirements":   []map[string]string{{"marker": "ADD", "text": "A landing page with a hero"}},
				"preserve":       []string{},
				"affected_files": []string{"src/sections/HeroSection.tsx"},
			})
			s := testutil.NewChat(t, append([]testutil.Turn{testutil.Text(string(taskJSON))}, apiTurns()...)...)
			s.AnswerAll = true
			return s.BaseURL(), s.Requests
		}, "model", "split into requirements by"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitRepo(t)
			base, requests := tc.start(t)
			t.Setenv("RALPH_TEST_API_KEY", "sk-test-key")
			toml := fmt.Sprintf("agent = \"api\"\n\n[agents.api]\nprovider = %q\nbase_url = %q\napi_key_env = \"RALPH_TEST_API_KEY\"\n\n[task]\nparser = %q\n", tc.provider, base, tc.parser)
			if err := os.WriteFile(filepath.Join(dir, "ralph.toml"), []byte(toml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runInProcess(t, dir, "run", "build the Tideline landing page")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			for _, want := range []string{"task.md " + tc.option, "plan validated", "completed — unverified: no gate checks this task's work"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "src/sections/HeroSection.tsx")); err != nil {
				t.Error(err)
			}
			if tc.parser == "model" {
				md, _ := os.ReadFile(filepath.Join(dir, ".ralph/task.md"))
				if !strings.Contains(string(md), "- [ADD] A landing page with a hero") {
					t.Errorf("task.md was not written from the model's answer:\n%s", md)
				}
			}
			// The system prompt went as the system prompt, not user text.
			var sawSystem bool
			for _, r := range requests() {
				if strings.Contains(string(r.Body), "You are a coding agent working inside ralph") {
					sawSystem = true
				}
			}
			if !sawSystem {
				t.Error("no request carried ralph's system prompt")
			}

			ctx := context.Background()
			st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			task, err := st.LatestTask(ctx)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := st.EventsAfter(ctx, task.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			tools := map[string]bool{}
			for _, e := range evs {
				if e.Kind == "tool_call" {
					tools[e.Tool+" "+progress.SummarizeInput(json.RawMessage(e.Data))] = true
				}
			}
			for _, want := range []string{"write_file .ralph/plan.tsx", "write_file src/sections/HeroSection.tsx", "run ls src/sections"} {
				if !tools[want] {
					t.Errorf("store lacks tool call %q; has %v", want, tools)
				}
			}
			if task.InputTokens == 0 {
				t.Error("no token usage recorded")
			}
		})
	}
}
