package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// planAtStartKey records the plan's hash when a task started, so a plan
// carried over from the previous task cannot open BUILD unchanged.
func planAtStartKey(taskID int64) string { return fmt.Sprintf("task:%d:plan_at_start", taskID) }

// taskTypeKey records how the engine routes the task.
func taskTypeKey(taskID int64) string { return fmt.Sprintf("task:%d:route", taskID) }

func hashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Run starts a new task with message and loops until it ends.
func (e *Engine) Run(ctx context.Context, message string) (Outcome, error) {
	if strings.TrimSpace(message) == "" {
		return Outcome{}, errors.New("run: the task message is empty")
	}
	e.warnUnverified()
	r, t, err := e.startTask(ctx, message)
	if err != nil {
		return Outcome{}, err
	}
	return e.clarifyThenLoop(ctx, r, t)
}

// Resume continues the latest task. A task that ended is not restarted,
// except a stopped or interrupted one when force is set.
func (e *Engine) Resume(ctx context.Context, force bool) (Outcome, error) {
	t, err := e.st.LatestTask(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if t.Status == store.TaskDone {
		resumable := t.Reason != string(Completed) && t.Reason != string(NeedsClarification)
		if !force || !resumable {
			hint := ""
			if resumable {
				hint = "; use --force to continue it anyway"
			}
			return Outcome{}, fmt.Errorf("%w: task %d ended (%s: %s)%s", ErrNothingToResume, t.Number, t.Reason, t.Detail, hint)
		}
	}
	e.warnUnverified()
	if raw, ok, err := e.st.State(ctx, startKey(t.ID)); err != nil {
		return Outcome{}, err
	} else if ok {
		// Killed while the task started: finish the start, then loop.
		var rec startRecord
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return Outcome{}, fmt.Errorf("task %d: read its start record: %w", t.Number, err)
		}
		if err := e.st.SetTaskAgent(ctx, t.ID, e.opt.AgentName); err != nil {
			return Outcome{}, err
		}
		r := &run{taskID: t.ID, number: t.Number}
		e.report(r, Progress{Stage: StageTask, Message: fmt.Sprintf("resuming task %d from its start: %s", t.Number, firstLine(t.Message))})
		parsed, err := e.finishStart(ctx, r, t.Message, rec)
		if err != nil {
			return Outcome{}, err
		}
		return e.clarifyThenLoop(ctx, r, parsed)
	}
	if raw, ok, _ := e.st.State(ctx, gatesPassedKey(t.ID)); ok && t.Status != store.TaskDone {
		// Killed after the gates passed: finish the task, no agent needed.
		n, _ := strconv.Atoi(raw)
		r := &run{taskID: t.ID, number: t.Number, iteration: n, cost: t.CostUSD}
		e.report(r, Progress{Stage: StageTask, Message: fmt.Sprintf("resuming task %d: the gates passed in iteration %d, finishing it", t.Number, n)})
		_ = e.ws.SetStatus(workspace.StatusComplete)
		e.snapshotPost(ctx, r)
		e.endIteration(ctx, r, e.ws.Phase(), outCompleted, agent.Result{}, nil)
		return e.finish(ctx, r, Completed, fmt.Sprintf("the quality gates passed in iteration %d; ralph resume finished the task", n)), nil
	}
	if err := e.st.CloseOpenIterations(ctx, t.ID); err != nil {
		return Outcome{}, err
	}
	its, err := e.st.Iterations(ctx, t.ID)
	if err != nil {
		return Outcome{}, err
	}
	if err := e.st.ReopenTask(ctx, t.ID); err != nil {
		return Outcome{}, err
	}
	if force {
		_ = e.st.DeleteState(ctx, store.KeyStopRequest)
	}
	if err := e.st.SetTaskAgent(ctx, t.ID, e.opt.AgentName); err != nil {
		return Outcome{}, err
	}
	// The store, not iteration.txt, says which iterations ran: the file
	// moves first, and a kill before the store has the iteration must
	// not leave a gap in the numbers.
	last := 0
	if len(its) > 0 {
		last = its[len(its)-1].Number
	}
	_ = e.ws.SetInt(workspace.Iteration, last)
	route, _, _ := e.st.State(ctx, taskTypeKey(t.ID))
	if e.ws.Status() != workspace.StatusWaiting {
		_ = e.ws.SetStatus(workspace.StatusRunning)
	}
	r := &run{taskID: t.ID, number: t.Number, iteration: last, route: task.Type(route), cost: t.CostUSD, force: force}
	if t.Status != store.TaskDone {
		// An interrupted task keeps its streak; a task that ended and is
		// forced on starts a fresh one.
		r.gateFailures = gateFailureStreak(its)
	}
	e.report(r, Progress{Stage: StageTask, Message: fmt.Sprintf("resuming task %d at iteration %d: %s", t.Number, last+1, firstLine(t.Message))})
	var parsed task.Task
	if r.route == task.NeedsClarification {
		// The run died while asking: wait on the same request again.
		src, _ := e.ws.Read(workspace.Task)
		if parsed, err = task.Parse([]byte(src)); err != nil {
			parsed = task.Task{Original: t.Message}
		}
	}
	return e.clarifyThenLoop(ctx, r, parsed)
}

// clarifyThenLoop asks the human about a needs-clarification task t
// before the loop starts, then runs the loop.
func (e *Engine) clarifyThenLoop(ctx context.Context, r *run, t task.Task) (Outcome, error) {
	defer r.tree.close()
	if r.route == task.NeedsClarification {
		if end, detail := e.clarify(ctx, r, t, e.ws.PlanContent() != ""); end != "" {
			return e.finish(ctx, r, end, detail), nil
		}
	}
	return e.loop(ctx, r)
}

// gateFailureStreak counts the failed completion attempts since the last
// step passed its gates: the streak the gate-failures limit counts.
func gateFailureStreak(its []store.Iteration) int {
	n := 0
	for _, it := range slices.Backward(its) {
		if it.Outcome == outStepDone {
			break
		}
		if it.Outcome == outGatesFail {
			n++
		}
	}
	return n
}

// run is the state of one task's loop in this process.
type run struct {
	taskID    int64
	number    int
	iteration int
	route     task.Type
	cost      float64
	// gateFailures counts failed completion attempts in a row.
	gateFailures int
	// agentErrors counts agent failures in a row.
	agentErrors int
	// fallback is how many backends of Options.Fallbacks this run has
	// moved on to (0: Options.Agent).
	fallback int
	// orch is the orchestration plan BUILD walks, nil for other plans;
	// step is the Step of it the loop works on (orchestrate.go).
	orch *plan.Node
	step *stepCursor
	// force is set for a resume --force: a Human that was rejected asks
	// again.
	force bool
	// deadline is when this invocation's max-duration runs out; zero
	// means no limit.
	deadline time.Time
	// escapes collects processes that left their group (procs.go).
	escapes escapes
	// seal is the harness's files as the agent found them, while the
	// agent runs; configHash is ralph.toml's hash then (guard.go).
	seal       map[string]string
	configHash string
	// begun is the iteration's start being recorded while the agent's
	// call prepares, and beginErr how that failed (call.go).
	begun    begun
	beginErr error
	// sealKept maps each large file of the seal to the hash of what this
	// run last kept of it in the store (sealOwned).
	sealKept map[string]string
	// sealUsed is set once the agent's writes to the harness's files are
	// undone, while the store still keeps the seal: it goes with the
	// iteration's end, or before ralph writes those files itself (guard.go).
	sealUsed bool
	// guardNotes are what feedback.md tells the agent next about its
	// changes the harness undid.
	guardNotes []string
	// historyChecks numbers this run's history checks, so each keeps
	// the agent's version under refs of its own.
	historyChecks int
	// history is the task's historyRecord as this run last read or
	// wrote it in the store (guard_history.go), nil before the first.
	history *historyCache
	// historyQuiet is when the last history check found the repository
	// as marked, and proc.Runs() then (guard_history.go).
	historyQuiet quietCheck
	// idle marks the iteration as no progress for stall detection: it
	// asked to finish with the previous task's plan unchanged.
	idle bool
	// tree is what the loop's Tracker saw of the working tree.
	tree treeWatch
	// endRead is the protected-files check's whole read of the tree at
	// the task's end, which task-N-post shares (complete.go).
	endRead endRead
}

// startKey holds a task's startRecord while its start is unfinished: the
// task is in the store but its snapshot, counter or task.md may not be.
func startKey(taskID int64) string { return fmt.Sprintf("task:%d:start", taskID) }

// gatesPassedKey records the iteration whose gates passed and completed
// the task, before the post-task snapshot: a resume finishes the task
// from there rather than run the agent again.
func gatesPassedKey(taskID int64) string { return fmt.Sprintf("task:%d:gates_passed", taskID) }

// startRecord is what a task's start read before it changed anything, kept
// so that a resume after a kill can finish the start as it began.
type startRecord struct {
	// Prev is task-counter.txt before the task.
	Prev int `json:"prev"`
	// Summary is the previous task's summary.md.
	Summary string `json:"summary"`
}

// startTask runs the task lifecycle's opening (SPEC §3). The task goes to
// the store first, with what the start read; every later step — the
// pre-task snapshot, stale-state cleanup, the history, the counter and
// task.md — can be done again by a resume after a kill (finishStart). It
// returns the task as parsed, for a clarification before the loop.
func (e *Engine) startTask(ctx context.Context, message string) (*run, task.Task, error) {
	if err := e.ws.Init(); err != nil {
		return nil, task.Task{}, err
	}
	e.warnWeakenedGates(ctx)
	prev := e.ws.Int(workspace.TaskCounter)
	n, err := e.nextNumber(ctx, prev)
	if err != nil {
		return nil, task.Task{}, err
	}
	// A task killed while it started, and not resumed, ends here: this
	// task replaces it.
	if last, err := e.st.LatestTask(ctx); err == nil && last.Status == store.TaskRunning {
		if _, pending, _ := e.st.State(ctx, startKey(last.ID)); pending {
			_ = e.st.EndTask(ctx, last.ID, store.TaskInterrupted, string(Interrupted), fmt.Sprintf("killed while it started; task %d was run instead", n))
		}
	}
	summary, _ := e.ws.Read(workspace.Summary)
	rec, err := json.Marshal(startRecord{Prev: prev, Summary: summary})
	if err != nil {
		return nil, task.Task{}, err
	}
	id, err := e.st.BeginTask(ctx, n, message, string(task.Pending), e.opt.AgentName, func(id int64) map[string]string {
		m := map[string]string{startKey(id): string(rec)}
		if e.opt.Request != "" {
			m[store.RequestKey(e.opt.Request)] = strconv.FormatInt(id, 10)
		}
		return m
	})
	if err != nil {
		return nil, task.Task{}, err
	}
	pausepoint.At(pausepoint.TaskRecorded)
	r := &run{taskID: id, number: n}
	t, err := e.finishStart(ctx, r, message, startRecord{Prev: prev, Summary: summary})
	if err != nil {
		return nil, task.Task{}, err
	}
	return r, t, nil
}

// nextNumber is the new task's number (NextTaskNumber).
func (e *Engine) nextNumber(ctx context.Context, prev int) (int, error) {
	return NextTaskNumber(ctx, e.st, e.opt.Snapshots, prev)
}

// NextTaskNumber is the number a new task gets: one past prev (the
// workspace's task-counter.txt), past every task on record in st, and
// past any task-N-pre already taken in snaps (a rollback puts the counter
// back, so task-N-pre is always this task's own start). ralph run
// --worktree numbers its task with it before the engine runs.
func NextTaskNumber(ctx context.Context, st *store.Store, snaps *snapshot.Repo, prev int) (int, error) {
	n := prev + 1
	highest, err := st.MaxTaskNumber(ctx)
	if err != nil {
		return 0, err
	}
	n = max(n, highest+1)
	if snaps == nil {
		return n, nil
	}
	for {
		taken, err := snaps.Exists(ctx, snapshot.TaskPre(n))
		if err != nil {
			return 0, fmt.Errorf("snapshot before task %d: %w", n, err)
		}
		if !taken {
			return n, nil
		}
		n++
	}
}

// finishStart does the steps of a task's start after its row is in the
// store. Each is safe to do again after a kill: the snapshot is taken
// once, the history line appended once, and the rest is rewritten whole.
// Deleting the start record is the last step: until then a resume calls
// finishStart again.
func (e *Engine) finishStart(ctx context.Context, r *run, message string, rec startRecord) (_ task.Task, err error) {
	if err := e.syncOrigin(ctx, r.taskID, message); err != nil {
		return task.Task{}, err
	}
	// The task's Tracker watches from before the pre-task snapshot (its
	// first walk goes on alongside), so that the snapshot's tree and what
	// the Tracker sees change after it are the tree at the first
	// iteration, the protected-files check and the end: no other read of
	// the whole tree at the task's boundary.
	r.tree.close()
	r.tree = e.watchTree(ctx, true)
	defer func() {
		if err != nil {
			r.tree.close()
		}
	}()
	previous, startNote, err := e.snapshotBefore(ctx, r, rec.Prev, message)
	// No snapshot refreshed the index when it was saved already or the
	// tree is empty: the walk need not wait to hear it.
	r.tree.indexRefreshed(false, nil)
	if err != nil {
		return task.Task{}, err
	}
	defer func() {
		if err != nil {
			startNote() // its count of uncommitted changes ends with it
		}
	}()
	if err := e.resetForTask(r.number, rec); err != nil {
		return task.Task{}, err
	}
	handed := e.opt.Plan != nil
	if handed {
		if err := e.ws.Write(workspace.Plan, string(e.opt.Plan)); err != nil {
			return task.Task{}, fmt.Errorf("write the plan handed in: %w", err)
		}
	}
	planText := e.ws.PlanContent()
	t, opt, err := e.writeTask(ctx, r.number, message, rec, previous, planText)
	if err != nil {
		return task.Task{}, err
	}
	if err := e.route(r, t, opt, planText); err != nil {
		return task.Task{}, err
	}
	atStart := planText
	if handed {
		// The plan handed in is this task's, not the previous one's: the
		// PLAN-phase check validates it at the top of iteration 1, even
		// for a bug fix.
		atStart = ""
		if err := e.ws.SetPhase(workspace.PhasePlan); err != nil {
			return task.Task{}, err
		}
	}
	if err := e.recordStart(ctx, r, atStart); err != nil {
		return task.Task{}, err
	}
	e.report(r, Progress{Stage: StageTask, Message: fmt.Sprintf("task %d (%s, task.md %s): %s", r.number, r.route, opt, firstLine(message))})
	e.harnessEvent(r, "task", fmt.Sprintf("task %d started as %s; task.md %s", r.number, r.route, opt), "")
	e.recordSandbox(r)
	if note := startNote(); note != "" {
		e.harnessEvent(r, "snapshot", note, "")
	}
	if handed {
		e.harnessEvent(r, "plan", "a plan was handed in (ralph run --plan): .ralph/plan.tsx is validated at the top of iteration 1", "")
	}
	return t, nil
}

// snapshotBefore saves task-N-pre for task n, once (an earlier attempt
// at this start may have saved it: then it is only put on record). It
// returns the snapshot the task parser names as the previous task's state
// ("none" without snapshots) and a note on what was saved, "" when
// nothing was.
func (e *Engine) snapshotBefore(ctx context.Context, r *run, prev int, message string) (previous string, note func() string, err error) {
	n := r.number
	previous, note = "none", func() string { return "" }
	if e.opt.Snapshots == nil {
		return previous, note, nil
	}
	name := snapshot.TaskPre(n)
	saved, err := e.opt.Snapshots.Exists(ctx, name)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot before task %d: %w", n, err)
	}
	if saved {
		// An earlier attempt at this start saved it (the number was
		// free when the task was recorded); make sure it is on record.
		if err := e.recordSnapshot(ctx, name, n); err != nil {
			return "", nil, err
		}
	} else if note, err = e.savePre(ctx, r, name, prev, message); err != nil {
		return "", nil, err
	}
	if prev > 0 {
		previous = name
		if ok, _ := e.opt.Snapshots.Exists(ctx, snapshot.TaskPost(prev)); ok {
			previous = snapshot.TaskPost(prev)
		}
	}
	return previous, note, nil
}

// savePre saves the snapshot called name before r's task, except for the
// first task of an empty tree, and returns a note on what it saved, which
// counts the user's uncommitted changes meanwhile (a diff of two trees:
// the note waits for it). Its tree is what r's Tracker counts changes
// from.
func (e *Engine) savePre(ctx context.Context, r *run, name string, prev int, message string) (func() string, error) {
	n := r.number
	none := func() string { return "" }
	empty, err := treeIsEmpty(e.ws.Root)
	if err != nil {
		return nil, err
	}
	if prev == 0 && empty {
		return none, nil
	}
	// A whole read, while the Tracker's first walk reads the files: it
	// watches every directory already, so what changes from here on it
	// reports, counted from this snapshot's tree.
	snap, err := e.opt.Snapshots.Save(ctx, name, fmt.Sprintf("before task %d: %s", n, firstLine(message)))
	if err != nil {
		return nil, fmt.Errorf("snapshot before task %d: %w", n, err)
	}
	if e.opt.Snapshots.Root() == e.ws.Root {
		r.tree.recorded(snap.Tree)
		// The snapshot's private index is the tree as it read it, but
		// for the files it left unstaged: the Tracker's first walk takes
		// the other files' states from it.
		r.tree.indexRefreshed(true, e.opt.Snapshots.Unstaged())
	}
	pausepoint.At(pausepoint.TaskPreSnapshot)
	dirty := make(chan int, 1)
	go func() {
		d, _ := e.opt.Snapshots.Uncommitted(ctx, snap)
		dirty <- d
	}()
	_ = e.st.AddSnapshot(ctx, store.Snapshot{Name: snap.Name, Commit: snap.Commit, Task: n, Kind: string(snap.Kind), Message: snap.Message})
	return sync.OnceValue(func() string {
		note := fmt.Sprintf("saved %s (%s)", snap.Name, snap.ShortCommit())
		if d := <-dirty; d > 0 {
			note += fmt.Sprintf(", including %d uncommitted changes of yours", d)
		}
		return note
	}), nil
}

// resetForTask cleans the previous task's state for task n. The previous
// summary goes to the history first (once: an earlier attempt may have
// appended it already); the start record keeps it for the task parser
// before summary.md is cleared. The counter moves last.
func (e *Engine) resetForTask(n int, rec startRecord) error {
	if rec.Prev > 0 {
		line := firstLine(rec.Summary)
		if line == "" {
			line = "(no summary)"
		}
		entry := fmt.Sprintf("- Task %d: %s\n", rec.Prev, line)
		if history, _ := e.ws.Read(workspace.TaskHistory); !strings.HasSuffix(history, entry) {
			if err := e.ws.Append(workspace.TaskHistory, entry); err != nil {
				return err
			}
		}
	}
	for name, content := range map[string]string{
		workspace.Summary:   "",
		workspace.Feedback:  "",
		workspace.Status:    workspace.StatusRunning,
		workspace.Iteration: "0",
		workspace.Phase:     workspace.PhasePlan,
	} {
		if err := e.ws.Write(name, content); err != nil {
			return fmt.Errorf("reset .ralph/%s: %w", name, err)
		}
	}
	pausepoint.At(pausepoint.TaskCounter)
	return e.ws.SetInt(workspace.TaskCounter, n)
}

// writeTask parses message into task n's task.md and writes it.
func (e *Engine) writeTask(ctx context.Context, n int, message string, rec startRecord, previous, planText string) (task.Task, task.Option, error) {
	in := task.Input{Message: message, PlanExists: planText != "", Counter: n, Previous: previous}
	if rec.Prev > 0 {
		in.PreviousSummary = strings.TrimSpace(rec.Summary)
	}
	in.Files = listFiles(e.ws.Root, task.MaxPromptFiles)
	parser := e.opt.TaskParser
	if parser == nil {
		parser = &task.Parser{Logger: e.opt.Logger}
	}
	t, opt, err := parser.Parse(ctx, in)
	if err != nil {
		return task.Task{}, task.Option{}, fmt.Errorf("parse task: %w", err)
	}
	if err := e.ws.Write(workspace.Task, string(task.Format(t))); err != nil {
		return task.Task{}, task.Option{}, fmt.Errorf("write task.md: %w", err)
	}
	pausepoint.At(pausepoint.TaskWritten)
	return t, opt, nil
}

// route decides how the engine runs task t and sets r.route: a fresh
// task or a mutation of the plan, a bug fix (straight to BUILD, against
// the plan as it is), or one that needs clarification first.
func (e *Engine) route(r *run, t task.Task, opt task.Option, planText string) error {
	route := t.Route()
	if route == task.NeedsClarification && opt.Method != task.OptionA {
		// Only a model's reading may stop a task for clarification; the
		// local classifier's guess is not enough to refuse work.
		route = task.Pending
	}
	if route == task.Pending {
		route = task.Fresh
		if planText != "" {
			route = task.Mutation
		}
	}
	r.route = route
	if route == task.Bugfix {
		return e.ws.SetPhase(workspace.PhaseBuild)
	}
	return nil
}

// recordStart records the task's route and the plan it started with,
// forgets a stop request made before it, and completes the start.
func (e *Engine) recordStart(ctx context.Context, r *run, planText string) error {
	for _, err := range []error{
		e.st.SetTaskType(ctx, r.taskID, string(r.route)),
		e.st.SetState(ctx, taskTypeKey(r.taskID), string(r.route)),
		e.st.SetState(ctx, planAtStartKey(r.taskID), hashString(planText)),
		e.recordGates(ctx, r),
		e.st.DeleteState(ctx, store.KeyStopRequest),
		// The start is complete.
		e.st.DeleteState(ctx, startKey(r.taskID)),
	} {
		if err != nil {
			return fmt.Errorf("record the start of task %d: %w", r.number, err)
		}
	}
	return nil
}

// syncOrigin keeps origin.md the first task's message (SPEC §2): the
// message of the first task whose start got past the store. A task whose
// start was killed and never resumed does not count, so a dead run's
// message never stays there.
func (e *Engine) syncOrigin(ctx context.Context, taskID int64, message string) error {
	tasks, err := e.st.Tasks(ctx)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if t.ID >= taskID {
			break
		}
		if _, abandoned, _ := e.st.State(ctx, startKey(t.ID)); !abandoned {
			return nil // an earlier task started: origin.md is its message
		}
	}
	want := message + "\n"
	if have, _ := e.ws.Read(workspace.Origin); have == want {
		return nil
	}
	if err := e.ws.Write(workspace.Origin, want); err != nil {
		return fmt.Errorf("write origin.md: %w", err)
	}
	return nil
}

// recordSnapshot puts the snapshot called name, which git has, on record
// in the store when a kill came between the two.
func (e *Engine) recordSnapshot(ctx context.Context, name string, n int) error {
	if ok, err := e.st.HasSnapshot(ctx, name); err != nil || ok {
		return err
	}
	snap, err := e.opt.Snapshots.Resolve(ctx, name)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", name, err)
	}
	return e.st.AddSnapshot(ctx, store.Snapshot{Name: snap.Name, Commit: snap.Commit, Task: n, Kind: string(snap.Kind), Message: snap.Message})
}

// clarifyKey names the request a needs-clarification task makes.
const clarifyKey = "task-clarification"

// clarify asks the human the parser's question (a text request) before the
// loop starts, and writes the answer into task.md. No answer — a
// rejection or the timeout — ends the task as needs-clarification.
func (e *Engine) clarify(ctx context.Context, r *run, t task.Task, planExists bool) (Reason, string) {
	question := strings.TrimSpace(t.Question)
	if question == "" {
		question = "The task is ambiguous. What exactly should change, and what must stay as it is?"
	}
	req, ok, err := e.st.LatestHumanRequest(ctx, r.taskID, clarifyKey)
	if err != nil {
		return AgentError, err.Error()
	}
	if !ok {
		_ = e.ws.SetStatus(workspace.StatusWaiting)
		req, err = e.st.RequestHuman(ctx, store.HumanRequest{
			TaskID: r.taskID, StepKey: clarifyKey, Type: store.HumanText,
			Prompt: question, TimeoutAt: e.now().Add(DefaultHumanTimeout),
		})
		if err != nil {
			return AgentError, err.Error()
		}
		e.notify(ctx, fmt.Sprintf("ralph: task %d needs clarification (request %d): %s — answer with `ralph approve %d --response TEXT`", r.number, req.ID, question, req.ID))
	}
	if req.Status == store.HumanPending {
		var end Reason
		var detail string
		if req, end, detail = e.waitHuman(ctx, r, req); end != "" {
			return end, detail
		}
	}
	if req.Rejected() || strings.TrimSpace(req.Response) == "" {
		return NeedsClarification, fmt.Sprintf("the task is ambiguous and request %d got no answer: %s — run ralph run again with a clearer message", req.ID, question)
	}
	// Build on the answer: the question and answer join the task, and the
	// task is routed as what it now is.
	answer := strings.TrimSpace(req.Response)
	t.Type = task.Classify(t.Original+"\n"+answer, planExists)
	if t.Type == task.NeedsClarification || t.Type == task.Pending {
		t.Type = task.Fresh
		if planExists {
			t.Type = task.Mutation
		}
	}
	t.Question = question + "\n\nAnswer: " + answer
	if err := e.ws.Write(workspace.Task, string(task.Format(t))); err != nil {
		return AgentError, fmt.Sprintf("write task.md: %v", err)
	}
	r.route = t.Type
	_ = e.st.SetTaskType(ctx, r.taskID, string(r.route))
	_ = e.st.SetState(ctx, taskTypeKey(r.taskID), string(r.route))
	_ = e.ws.SetStatus(workspace.StatusRunning)
	if r.route == task.Bugfix {
		_ = e.ws.SetPhase(workspace.PhaseBuild)
	}
	e.harnessEvent(r, "task", fmt.Sprintf("clarified by request %d; the task is now %s", req.ID, r.route), "")
	return "", ""
}

// treeIsEmpty reports whether the working tree has nothing but .git and
// .ralph in it.
func treeIsEmpty(root string) (bool, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name() != ".git" && e.Name() != workspace.Dir && e.Name() != "ralph.toml" {
			return false, nil
		}
	}
	return true, nil
}

// listFiles lists up to max files of the tree for the task parser,
// skipping .git, .ralph and dependency folders.
func listFiles(root string, max int) []string {
	var out []string
	skip := map[string]bool{".git": true, workspace.Dir: true, "node_modules": true, "vendor": true, "dist": true, "build": true, ".cache": true}
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || len(out) >= max {
			return filepath.SkipDir
		}
		if d.IsDir() && skip[d.Name()] && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(strings.TrimLeft(s, "# "))
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
