package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// warnings collects the warning lines a run reports.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Report(p Progress) {
	if p.Stage == StageWarning {
		w.mu.Lock()
		w.lines = append(w.lines, p.Message)
		w.mu.Unlock()
	}
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// killedTask runs a task whose first agent run stands for a kill (the
// task stays open, as a kill leaves it) and returns the workspace, its
// store, the agent (which completes the task on any later iteration, and
// records each prompt in *seen) and the task.
func killedTask(t *testing.T, seen *[]string) (*workspace.Workspace, *store.Store, agent.Agent, store.Task) {
	t.Helper()
	ws, st := newBenchWorkspace(t, 1)
	ctx := context.Background()
	rctx, cancel := context.WithCancel(ctx)
	ag := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if seen != nil {
			*seen = append(*seen, req.Prompt)
		}
		if req.Iteration == 1 {
			cancel() // stands for the kill: the task stays open
			return agent.Result{}, context.Canceled
		}
		_ = workspace.WriteFile(req.Dir+"/.ralph/summary.md", []byte("Done\n"))
		return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
	})
	if _, err := New(ws, st, Options{Agent: ag, Gates: []gate.Gate{gate.HasSummary{}}}).Run(rctx, "add a dark mode toggle"); err != nil {
		t.Fatal(err)
	}
	tk, err := st.LatestTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ws, st, ag, tk
}

// resumeCompletes resumes the task a kill left open (killedTask) and
// fails the test unless the resume completes it; it returns the outcome
// and the warnings the resume showed.
func resumeCompletes(t *testing.T, ws *workspace.Workspace, st *store.Store, ag agent.Agent) (Outcome, *warnings) {
	t.Helper()
	w := &warnings{}
	out, err := New(ws, st, Options{Agent: ag, Gates: []gate.Gate{gate.HasSummary{}}, Reporter: w}).Resume(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("resume ended %s: %s", out.Reason, out.Detail)
	}
	return out, w
}

// An agent killed mid-iteration leaves its write of task.md behind; the
// resume undoes it against the seal the store kept, before the agent runs
// again, and says it happened while ralph was not running.
func TestResumeUndoesWhatAKilledAgentWrote(t *testing.T) {
	ctx := context.Background()
	var seen []string
	ws, st, ag, tk := killedTask(t, &seen)
	// What a kill while the agent ran leaves: the seal in the store, and
	// the agent's write in the tree.
	seal, err := guard.TakeSeal(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(sealRecord{Files: seal})
	if err := st.SetState(ctx, sealKey(tk.ID), string(b)); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(workspace.Task, "# Task\n\nNothing to do.\n"); err != nil {
		t.Fatal(err)
	}

	out, w := resumeCompletes(t, ws, st, ag)
	if !strings.Contains(w.String(), "the agent wrote .ralph/task.md; the task is the one ralph was given (undone) while ralph was not running") {
		t.Errorf("warnings:\n%s", w.String())
	}
	last := seen[len(seen)-1]
	if !strings.Contains(last, "add a dark mode toggle") || strings.Contains(last, "Nothing to do") {
		t.Errorf("the resumed agent was given the agent's task:\n%s", last)
	}
	if n, _ := st.CountEvents(ctx, tk.ID, store.KindTamper); n != 1 {
		t.Errorf("tamper events = %d, want 1", n)
	}
	if !strings.Contains(out.Detail, "tampered with what is not its own 1 time (.ralph/task.md)") {
		t.Errorf("detail = %q", out.Detail)
	}
}

// A task keeps the command gates it started with: a resume whose
// ralph.toml lost the failing gate still runs it, and says so.
func TestResumeKeepsTheTasksGates(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	ctx := context.Background()
	claims := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		_ = workspace.WriteFile(req.Dir+"/.ralph/summary.md", []byte("Done\n"))
		return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
	})
	strict := []gate.Gate{gate.HasSummary{}, &gate.Command{GateName: "strict", Argv: []string{"false"}}}
	out, err := New(ws, st, Options{Agent: claims, Gates: strict, Limits: Limits{MaxIterations: 1}}).Run(ctx, "pass the strict gate")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != MaxIterations {
		t.Fatalf("run ended %s, want max-iterations", out.Reason)
	}
	// ralph.toml now has no command gate; the task is forced on.
	var w warnings
	out, err = New(ws, st, Options{Agent: claims, Gates: []gate.Gate{gate.HasSummary{}}, Limits: Limits{MaxIterations: 2}, Reporter: &w}).Resume(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != MaxIterations {
		t.Errorf("resume ended %s (%s), want max-iterations: the strict gate must still run", out.Reason, out.Detail)
	}
	if !strings.Contains(w.String(), "the task keeps what it started with (gates: strict)") {
		t.Errorf("warnings:\n%s", w.String())
	}
}

// agentPhases collects the phase each agent event was shown under.
type agentPhases struct {
	mu     sync.Mutex
	phases []string
}

func (a *agentPhases) Report(p Progress) {
	if p.Stage == StageAgent {
		a.mu.Lock()
		a.phases = append(a.phases, p.Phase)
		a.mu.Unlock()
	}
}

// An agent that writes phase.txt while it runs does not change the phase
// its events are shown under: that is the phase its iteration started
// in, the harness's, not the agent's forgery.
func TestAgentEventsShowTheIterationsPhase(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	ag := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		emit(agent.Event{Kind: agent.KindText, Text: "planning"})
		_ = workspace.WriteFile(req.Dir+"/.ralph/phase.txt", []byte(workspace.PhaseBuild+"\n"))
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "Write", Input: json.RawMessage(`{"file_path":".ralph/phase.txt"}`)})
		return agent.Result{Final: "still planning", ToolCalls: 1}, nil
	})
	var rep agentPhases
	if _, err := New(ws, st, Options{Agent: ag, Limits: Limits{MaxIterations: 1}, Reporter: &rep}).Run(context.Background(), "add a dark mode toggle"); err != nil {
		t.Fatal(err)
	}
	if want := []string{workspace.PhasePlan, workspace.PhasePlan}; strings.Join(rep.phases, ",") != strings.Join(want, ",") {
		t.Errorf("agent events shown under phases %v, want %v", rep.phases, want)
	}
	if got := ws.Phase(); got != workspace.PhasePlan {
		t.Errorf("phase.txt after the run = %q, want the agent's write undone (%q)", got, workspace.PhasePlan)
	}
}

// sealWatch is a gate that notes whether the store still kept a seal of
// the harness's files when the gates ran.
type sealWatch struct {
	st   *store.Store
	seen []bool
}

func (g *sealWatch) Name() string { return "seal-watch" }

func (g *sealWatch) Check(ctx context.Context, env gate.Env) gate.Result {
	tk, err := g.st.LatestTask(ctx)
	if err != nil {
		return gate.Result{Status: gate.Fail, Message: err.Error()}
	}
	_, kept, _ := g.st.State(ctx, sealKey(tk.ID))
	g.seen = append(g.seen, kept)
	return gate.Result{Status: gate.Pass}
}

// The seal a resume undoes against is gone from the store by the time
// the harness writes its own files (the gates, and what they flip), and
// an iteration that goes on deletes it with its end: a kill at any point
// after leaves nothing that would undo the harness's own writes.
func TestSealGoneBeforeTheHarnessWrites(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	ctx := context.Background()
	ag := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if req.Iteration == 1 {
			return agent.Result{Final: "more to do", ToolCalls: 1}, nil
		}
		_ = workspace.WriteFile(req.Dir+"/.ralph/summary.md", []byte("Done\n"))
		return agent.Result{Final: "done <promise>COMPLETE</promise>", ToolCalls: 1}, nil
	})
	watch := &sealWatch{st: st}
	out, err := New(ws, st, Options{Agent: ag, Gates: []gate.Gate{gate.HasSummary{}, watch}, Limits: Limits{MaxIterations: 3}}).Run(ctx, "add a dark mode toggle")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	if len(watch.seen) == 0 || slices.Contains(watch.seen, true) {
		t.Errorf("the store kept the seal while the gates ran: %v", watch.seen)
	}
	tk, err := st.LatestTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, kept, _ := st.State(ctx, sealKey(tk.ID)); kept {
		t.Error("the store still keeps a seal after the run")
	}
	its, err := st.Iterations(ctx, tk.ID)
	if err != nil || len(its) != 2 {
		t.Fatalf("iterations %+v, %v; want 2", its, err)
	}

	// A task whose one iteration goes on, and then ends on its limit.
	out, err = New(ws, st, Options{Agent: ag, Limits: Limits{MaxIterations: 1}}).Run(ctx, "add a light mode toggle")
	if err != nil || out.Reason != MaxIterations {
		t.Fatalf("run ended %s, %v; want %s", out.Reason, err, MaxIterations)
	}
	if _, kept, _ := st.State(ctx, sealKey(out.TaskID)); kept {
		t.Error("the store still keeps the seal of an iteration that went on")
	}
}

// A large harness file (the task history) is sealed under a key of its
// own, written only when it changed since this run wrote it; a resume
// after a kill while the agent ran restores it from there, exactly.
func TestResumeRestoresALargeSealedFile(t *testing.T) {
	ctx := context.Background()
	ws, st, ag, tk := killedTask(t, nil)
	e := New(ws, st, Options{Agent: ag, Gates: []gate.Gate{gate.HasSummary{}}})
	history := strings.Repeat("- task 1: an earlier task, done\n", 200)
	if err := ws.Write(workspace.TaskHistory, history); err != nil {
		t.Fatal(err)
	}

	// What the iteration's start records, as Begin does: the large file
	// under its own key the first time, the record alone after.
	r := &run{taskID: tk.ID}
	first := e.sealOwned(r)
	if len(first) != 2 || first[0].Key != sealFileKey(tk.ID, workspace.TaskHistory) || first[0].Value != history {
		t.Fatalf("first seal wrote %d values, want the history under its own key, then the record", len(first))
	}
	again := e.sealOwned(r)
	if len(again) != 1 || again[0].Key != sealKey(tk.ID) || strings.Contains(again[0].Value, "earlier task") {
		t.Fatalf("the seal of an unchanged history wrote %+v, want the small record alone", again)
	}
	if err := st.StartIteration(ctx, tk.ID, 2, workspace.PhasePlan, "", first...); err != nil {
		t.Fatal(err)
	}
	// The agent, killed while it ran, left its writes behind.
	if err := ws.Write(workspace.TaskHistory, "rewritten by the agent\n"); err != nil {
		t.Fatal(err)
	}

	_, w := resumeCompletes(t, ws, st, ag)
	if !strings.Contains(w.String(), "the agent wrote .ralph/task-history.md") {
		t.Errorf("warnings:\n%s", w.String())
	}
	got, _ := ws.Read(workspace.TaskHistory)
	if !strings.HasPrefix(got, history) {
		t.Errorf("task-history.md after the resume begins %q, want the sealed history", got[:min(len(got), 60)])
	}
	if _, kept, _ := st.State(ctx, sealFileKey(tk.ID, workspace.TaskHistory)); kept {
		t.Error("the task's end left its sealed history in the store")
	}
}

// programAgent runs argv as the agent, a program started through proc
// (as cliagent's backends are), its output lines its text.
type programFuncAgent struct{ argv, env []string }

func (p programFuncAgent) Name() string    { return "program" }
func (p programFuncAgent) Program() string { return p.argv[0] }
func (p programFuncAgent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	var out []string
	res, err := proc.Run(ctx, proc.Spec{Argv: p.argv, Dir: req.Dir, Env: p.env, OnLine: func(l string) {
		out = append(out, l)
		emit(agent.Event{Kind: agent.KindText, Text: l})
	}})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	return agent.Result{Final: strings.Join(out, "\n"), ToolCalls: 1}, err
}

// An agent that is a program starts only once its iteration's start and
// the seal of the harness's files are in the store, however long they
// take to record (they are recorded while the call prepares it); when
// they cannot be, the program never starts and the run says why.
func TestProgramAgentStartsAfterTheSeal(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	ctx := context.Background()
	beforeStartRecord = func() { time.Sleep(300 * time.Millisecond) }
	t.Cleanup(func() { beforeStartRecord = nil })
	probe := programFuncAgent{argv: []string{os.Args[0]}, env: []string{sealProbeEnv + "=" + ws.Path(workspace.Database)}}
	out, err := New(ws, st, Options{Agent: probe, Limits: Limits{MaxIterations: 2}}).Run(ctx, "add a dark mode toggle")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := st.LatestTask(ctx)
	its, err := st.Iterations(ctx, tk.ID)
	if err != nil || len(its) != 2 {
		t.Fatalf("iterations %+v, %v (run ended %s: %s)", its, err, out.Reason, out.Detail)
	}
	for _, it := range its {
		if want := fmt.Sprintf("sealed true, iterations %d", it.Number); it.Final != want {
			t.Errorf("iteration %d: the program found %q as it started, want %q", it.Number, it.Final, want)
		}
	}

	// A start the store refuses: the program does not run.
	ws2, st2 := newBenchWorkspace(t, 1)
	beforeStartRecord = func() { st2.Close() }
	marker := filepath.Join(t.TempDir(), "started")
	touch := programFuncAgent{argv: []string{"sh", "-c", `touch "$0"`, marker}}
	_, err = New(ws2, st2, Options{Agent: touch, Limits: Limits{MaxIterations: 1}}).Run(ctx, "add a dark mode toggle")
	if err == nil || !strings.Contains(err.Error(), "start iteration") {
		t.Errorf("run with a start the store refuses: %v, want the start's error", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Error("the program started though its iteration's start was not recorded")
	}
}
