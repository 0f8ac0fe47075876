package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// recorder wraps an agent and keeps every request it was given.
type recorder struct {
	agent.Agent
	mu   sync.Mutex
	reqs []agent.Request
}

func (r *recorder) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Agent.Run(ctx, req, emit)
}

func (r *recorder) requests() []agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Request(nil), r.reqs...)
}

// harness is an engine over a temporary git workspace, driven by a script
// whose first iteration writes planText to .ralph/plan.tsx and whose
// later iterations each finish one step.
type harness struct {
	t     *testing.T
	ws    *workspace.Workspace
	st    *store.Store
	agent *recorder
	opt   Options
}

func newHarness(t *testing.T, planText string, steps int) *harness {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	ws, err := workspace.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := os.WriteFile(filepath.Join(dir, "plan-src.tsx"), []byte(planText), 0o644); err != nil {
		t.Fatal(err)
	}
	its := []script.Iteration{{Actions: []script.Action{{Tool: "shell", Argv: []string{"cp", "plan-src.tsx", ".ralph/plan.tsx"}}}, Final: "planned"}}
	for i := 1; i <= steps; i++ {
		n := string(rune('0' + i))
		its = append(its, script.Iteration{Actions: []script.Action{
			{Tool: "write", Path: "step" + n + ".txt", Content: n},
			{Tool: "write", Path: ".ralph/summary.md", Content: "Did step " + n + "\n"},
			{Tool: "write", Path: ".ralph/status.txt", Content: "complete"},
		}, Final: "done"})
	}
	rec := &recorder{Agent: script.New(&script.Script{Iterations: its})}
	return &harness{t: t, ws: ws, st: st, agent: rec, opt: Options{
		Agent:      rec,
		Gates:      []gate.Gate{gate.HasSummary{}},
		Limits:     Limits{MaxIterations: 10},
		Registries: plan.DefaultRegistries(),
	}}
}

func (h *harness) engine() *Engine { return New(h.ws, h.st, h.opt) }

func (h *harness) steps(taskID int64) []store.StepRecord {
	h.t.Helper()
	rows, err := h.st.Steps(context.Background(), taskID)
	if err != nil {
		h.t.Fatal(err)
	}
	return rows
}

func summarize(rows []store.StepRecord) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, r.Kind+":"+r.Name+"="+r.Status)
	}
	return strings.Join(parts, " ")
}

// Seed 003, "Stop after phase completion": only the first phase ran.
// AC1: the Stop marker records a stop request (the state row, with its
// reason) and the loop ends with reason stopped.
func TestStopAfterPhaseCompletion(t *testing.T) {
	h := newHarness(t, `<Plan name="markers">
  <Phase name="Work">
    <Step name="Task">Write step1.txt</Step>
  </Phase>
  <Stop reason="Phase complete" />
  <Phase name="Never Runs">
    <Step name="Skipped">Write step2.txt</Step>
  </Phase>
</Plan>`, 2)
	var seen []string
	h.opt.Reporter = ReporterFunc(func(p Progress) {
		if p.Stage == StageNote && strings.Contains(p.Message, "<Stop> was reached") {
			v, ok, _ := h.st.State(context.Background(), store.KeyStopRequest)
			if ok {
				seen = append(seen, v)
			}
		}
	})
	out, err := h.engine().Run(context.Background(), "run the plan")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Stopped || out.Reason.ExitCode() != 8 || !strings.Contains(out.Detail, "Phase complete") {
		t.Fatalf("outcome = %+v", out)
	}
	if len(seen) != 1 || seen[0] != "Phase complete" {
		t.Fatalf("stop_requested while stopping = %q, want the reason", seen)
	}
	rows := h.steps(out.TaskID)
	var phases []string
	for _, r := range rows {
		if r.Kind == store.StepKindPhase {
			phases = append(phases, r.Name+"="+r.Status)
		}
		if r.Name == "Skipped" {
			t.Errorf("the step of Never Runs started: %+v", r)
		}
	}
	if strings.Join(phases, ",") != "Work=done" {
		t.Fatalf("phases = %v, want only Work, done (all rows: %s)", phases, summarize(rows))
	}
	if got := summarize(rows); !strings.Contains(got, "step:Task=done") || !strings.Contains(got, "stop:Phase complete=stopped") {
		t.Fatalf("rows = %s", got)
	}
	if _, err := os.Stat(filepath.Join(h.ws.Root, "step2.txt")); err == nil {
		t.Fatal("the second phase's work was done")
	}
	// The iterations carry the step they worked on.
	its, _ := h.st.Iterations(context.Background(), out.TaskID)
	if len(its) != 2 || its[1].Step != "Work › Task" {
		t.Fatalf("iterations = %+v", its)
	}
	// A resume does not restart what was stopped, unless forced; forced,
	// it goes on after the Stop.
	if _, err := h.engine().Resume(context.Background(), false); err == nil {
		t.Fatal("resume of a stopped task succeeded without --force")
	}
	out, err = h.engine().Resume(context.Background(), true)
	if err != nil || out.Reason != Completed {
		t.Fatalf("forced resume = %+v, %v", out, err)
	}
	if got := summarize(h.steps(out.TaskID)); !strings.Contains(got, "step:Skipped=done") || strings.Count(got, "stop:") != 1 {
		t.Fatalf("rows after forced resume = %s", got)
	}
}

// Each step is its own build loop: its instructions in the user prompt,
// its gates, and fresh status and summary for the next one.
func TestStepsRunInOrderWithTheirInstructions(t *testing.T) {
	h := newHarness(t, `<Plan name="two steps">
  <Phase name="Build">
    <Step name="Parser">Write the parser in step1.txt</Step>
    <Step name="Printer">Write the printer in step2.txt</Step>
  </Phase>
  <Phase name="Ship">
    <Step name="Docs">Document it in step3.txt</Step>
  </Phase>
</Plan>`, 3)
	var progressSteps []string
	h.opt.Reporter = ReporterFunc(func(p Progress) {
		if p.Stage == StageIteration {
			progressSteps = append(progressSteps, p.Step)
		}
	})
	out, err := h.engine().Run(context.Background(), "run the plan")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed || out.Iterations != 4 {
		t.Fatalf("outcome = %+v", out)
	}
	want := "phase:Build=done step:Parser=done step:Printer=done phase:Ship=done step:Docs=done"
	if got := summarize(h.steps(out.TaskID)); got != want {
		t.Fatalf("rows = %s\nwant %s", got, want)
	}
	reqs := h.agent.requests()
	for i, want := range []string{"Write the parser", "Write the printer", "Document it"} {
		p := reqs[i+1].Prompt
		if !strings.Contains(p, "## Current step:") || !strings.Contains(p, want) {
			t.Errorf("iteration %d prompt lacks its step %q:\n%s", i+2, want, p)
		}
	}
	if !strings.Contains(reqs[2].Prompt, "Build › Printer (step 2 of 3)") || !strings.Contains(reqs[2].Prompt, "Step done ✓") {
		t.Errorf("second step prompt:\n%s", reqs[2].Prompt)
	}
	// Iteration 2 opens BUILD, so its step is known after its first line.
	if strings.Join(progressSteps[2:], ",") != "Build › Printer,Ship › Docs" {
		t.Errorf("progress steps = %q", progressSteps)
	}
	its, _ := h.st.Iterations(context.Background(), out.TaskID)
	var itSteps []string
	for _, it := range its {
		itSteps = append(itSteps, it.Step)
	}
	if strings.Join(itSteps, ",") != ",Build › Parser,Build › Printer,Ship › Docs" {
		t.Errorf("iteration steps = %q", itSteps)
	}
	if s, _ := h.ws.Read(workspace.Summary); strings.TrimSpace(s) != "Did step 3" {
		t.Errorf("summary = %q", s)
	}
}

// AC5: Persona and Constraints reach the system prompt, never the user
// prompt; a step's Persona replaces the plan's, its Constraints add to
// the plan's, for that step only.
func TestPersonaAndConstraintsInTheSystemPrompt(t *testing.T) {
	h := newHarness(t, `<Plan name="review">
  <Persona>Senior security engineer</Persona>
  <Constraints>
    - No external dependencies
    - Keep changes small
  </Constraints>
  <Phase name="Review">
    <Step name="Audit">Review the code for vulnerabilities</Step>
    <Step name="Crypto">
      <Persona>Cryptography reviewer</Persona>
      <Constraints>Use crypto/rand only</Constraints>
      Check the token generator
    </Step>
  </Phase>
</Plan>`, 2)
	out, err := h.engine().Run(context.Background(), "review")
	if err != nil || out.Reason != Completed {
		t.Fatalf("outcome = %+v, %v", out, err)
	}
	reqs := h.agent.requests()
	audit, crypto := reqs[1], reqs[2]
	for _, want := range []string{"You are a senior security engineer.", "Constraints:\n- No external dependencies\n- Keep changes small"} {
		if !strings.Contains(audit.System, want) {
			t.Errorf("audit system prompt lacks %q:\n%s", want, audit.System)
		}
	}
	if strings.Contains(audit.System, "Cryptography") || strings.Contains(audit.System, "crypto/rand") {
		t.Errorf("the Crypto step's persona leaked into the Audit step:\n%s", audit.System)
	}
	for _, want := range []string{"You are a cryptography reviewer.", "- No external dependencies\n- Keep changes small\n- Use crypto/rand only"} {
		if !strings.Contains(crypto.System, want) {
			t.Errorf("crypto system prompt lacks %q:\n%s", want, crypto.System)
		}
	}
	if strings.Contains(crypto.System, "security engineer") {
		t.Errorf("the step persona should replace the plan's:\n%s", crypto.System)
	}
	for _, r := range reqs {
		for _, bad := range []string{"Senior security engineer", "Cryptography reviewer", "No external dependencies", "crypto/rand"} {
			if strings.Contains(r.Prompt, bad) {
				t.Errorf("iteration %d user prompt contains %q:\n%s", r.Iteration, bad, r.Prompt)
			}
		}
	}
	if !strings.Contains(crypto.Prompt, "Check the token generator") {
		t.Errorf("crypto step prompt lacks its instructions:\n%s", crypto.Prompt)
	}
}

func TestYouAre(t *testing.T) {
	for in, want := range map[string]string{
		"Senior security engineer":   "You are a senior security engineer.",
		"an expert in Go":            "You are an expert in Go.",
		"Infrastructure lead":        "You are an infrastructure lead.",
		"SRE on call":                "You are a SRE on call.",
		"You are a careful reviewer": "You are a careful reviewer.",
		"":                           "",
	} {
		if got := (PromptData{Persona: in}).YouAre(); got != want {
			t.Errorf("YouAre(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlanForUserPrompt(t *testing.T) {
	in := `<Plan name="x">
  <Persona text="Go expert" />
  <Constraints>
    no cgo
  </Constraints>
  <Step name="a">do it</Step>
</Plan>`
	got := planForUserPrompt(in)
	if strings.Contains(got, "Go expert") || strings.Contains(got, "no cgo") || !strings.Contains(got, `<Step name="a">do it</Step>`) {
		t.Fatalf("got:\n%s", got)
	}
	if _, err := plan.Parse([]byte(got)); err != nil {
		t.Fatalf("the stripped plan does not parse: %v", err)
	}
}

func TestHumanTimeout(t *testing.T) {
	for src, want := range map[string]time.Duration{
		`<Human message="m" />`:                 DefaultHumanTimeout,
		`<Human message="m" timeout="30m" />`:   30 * time.Minute,
		`<Human message="m" timeout={120} />`:   120 * time.Second,
		`<Human message="m" timeout="2s" />`:    2 * time.Second,
		`<Human message="m" timeout="45" />`:    45 * time.Second,
		`<Human message="m" timeout="soon" />`:  DefaultHumanTimeout,
		`<Human message="m" timeout={-3} />`:    DefaultHumanTimeout,
		`<Human message="m" timeout={['a']} />`: DefaultHumanTimeout,
	} {
		root, err := plan.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := HumanTimeout(root)
		if got != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
	}
}
