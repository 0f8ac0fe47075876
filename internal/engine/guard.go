package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Guard says how the engine protects what the gates depend on (SPEC §9).
type Guard struct {
	// Protect are globs of protected files; nil means
	// config.DefaultProtect.
	Protect []string `json:"protect,omitempty"`
	// OnChange is config.GuardAsk (the default), GuardRestore, GuardFail
	// or GuardAllow.
	OnChange string `json:"on_change,omitempty"`
	// Timeout bounds an ask (default DefaultHumanTimeout); no answer
	// rejects.
	Timeout time.Duration `json:"timeout_ns,omitempty"`
}

// ProtectedChanged ends a run whose agent changed a file the gates depend
// on, under [guard] on_change = "fail".
const ProtectedChanged Reason = "protected-changed"

// outProtected is the iteration outcome of a completion held for good.
const outProtected = "protected-changed"

// sealKey holds the harness-owned files as the agent found them, while
// the agent runs: a resume after a kill mid-iteration undoes against it.
func sealKey(taskID int64) string { return fmt.Sprintf("task:%d:seal", taskID) }

// gatesKey holds the command gates a task started with.
func gatesKey(taskID int64) string { return fmt.Sprintf("task:%d:gates", taskID) }

// configChangedKey is set when the agent changed ralph.toml during the
// task; it holds the gates the change weakened (a JSON list).
func configChangedKey(taskID int64) string { return fmt.Sprintf("task:%d:config_changed", taskID) }

// approvedKey holds the fingerprint of the protected changes a person
// approved, so the same changes are not asked about again.
func approvedKey(taskID int64) string { return fmt.Sprintf("task:%d:guard_approved", taskID) }

// commandGates lists the command gates of gates, as the guard sees them.
func commandGates(gates []gate.Gate) []guard.CommandGate {
	var out []guard.CommandGate
	for _, g := range gates {
		if c, ok := g.(*gate.Command); ok {
			cg := guard.CommandGate{Name: c.GateName, Argv: c.Argv, Dir: c.Dir, Optional: c.Optional}
			if c.Timeout > 0 {
				cg.Timeout = c.Timeout.String()
			}
			out = append(out, cg)
		}
	}
	return out
}

// withCommandGates returns gates with its command gates replaced by cgs,
// in their place (the built-ins keep theirs).
func withCommandGates(gates []gate.Gate, cgs []guard.CommandGate) []gate.Gate {
	var out []gate.Gate
	added := false
	for _, g := range gates {
		if _, ok := g.(*gate.Command); ok {
			if !added {
				out = append(out, toGates(cgs)...)
				added = true
			}
			continue
		}
		out = append(out, g)
	}
	if !added {
		// No command gate today: the task's go before the scope gate,
		// where buildGates puts them.
		i := slices.IndexFunc(out, func(g gate.Gate) bool { _, ok := g.(*gate.Scope); return ok })
		if i < 0 {
			i = len(out)
		}
		out = slices.Insert(out, i, toGates(cgs)...)
	}
	return out
}

func toGates(cgs []guard.CommandGate) []gate.Gate {
	out := make([]gate.Gate, len(cgs))
	for i, c := range cgs {
		d, _ := time.ParseDuration(c.Timeout)
		out[i] = &gate.Command{GateName: c.Name, Argv: c.Argv, Dir: c.Dir, Timeout: d, Optional: c.Optional}
	}
	return out
}

// configGates reads the command gates ralph.toml has now.
func configGates(root string) ([]guard.CommandGate, error) {
	cfg, err := config.Load(root)
	if err != nil {
		return nil, err
	}
	var out []guard.CommandGate
	for _, g := range cfg.Gates {
		cg := guard.CommandGate{Name: g.Name, Argv: g.Run, Dir: g.Dir, Optional: g.Optional}
		if g.Timeout.Duration > 0 {
			cg.Timeout = g.Timeout.String()
		}
		out = append(out, cg)
	}
	return out, nil
}

// taskChecks is what a task's completion is checked by, kept when the
// task starts: its command gates and its guard policy. ralph.toml can
// change under a running task (the agent can write it); these do not.
type taskChecks struct {
	Gates []guard.CommandGate `json:"gates"`
	Guard Guard               `json:"guard"`
}

// recordGates keeps the checks the task starts with: they are the task's
// for good, whatever ralph.toml says later.
func (e *Engine) recordGates(ctx context.Context, r *run) error {
	b, err := json.Marshal(taskChecks{Gates: commandGates(e.opt.Gates), Guard: e.opt.Guard})
	if err != nil {
		return err
	}
	return e.st.SetState(ctx, gatesKey(r.taskID), string(b))
}

// keptChecks reads the checks r's task started with.
func (e *Engine) keptChecks(ctx context.Context, taskID int64) (taskChecks, bool) {
	raw, ok, err := e.st.State(ctx, gatesKey(taskID))
	if err != nil || !ok {
		return taskChecks{}, false // a task from before checks were kept
	}
	var kept taskChecks
	if err := json.Unmarshal([]byte(raw), &kept); err != nil {
		e.log.Warn("read the task's gates", "err", err)
		return taskChecks{}, false
	}
	return kept, true
}

// taskGates makes the engine run the gates and guard policy r's task
// started with, and says so when ralph.toml has changed them since.
func (e *Engine) taskGates(ctx context.Context, r *run) {
	kept, ok := e.keptChecks(ctx, r.taskID)
	if !ok {
		return
	}
	changed := !slices.EqualFunc(kept.Gates, commandGates(e.opt.Gates), sameGate) ||
		kept.Guard.OnChange != e.opt.Guard.OnChange || kept.Guard.Timeout != e.opt.Guard.Timeout || !slices.Equal(kept.Guard.Protect, e.opt.Guard.Protect)
	if !changed {
		return
	}
	e.opt.Gates = withCommandGates(e.opt.Gates, kept.Gates)
	e.opt.Guard = kept.Guard
	e.report(r, Progress{Stage: StageWarning, Message: fmt.Sprintf("ralph.toml's gates or [guard] changed since task %d started; the task keeps what it started with (gates: %s)", r.number, gateNames(kept.Gates))})
}

func sameGate(a, b guard.CommandGate) bool {
	return a.Name == b.Name && slices.Equal(a.Argv, b.Argv) && a.Dir == b.Dir && a.Timeout == b.Timeout && a.Optional == b.Optional
}

func gateNames(gs []guard.CommandGate) string {
	if len(gs) == 0 {
		return "none"
	}
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}

// warnWeakenedGates says, before a new task starts, when the gates it
// would run lack what an agent took out of ralph.toml during the task
// before: a gate removed or weakened that nobody put back.
func (e *Engine) warnWeakenedGates(ctx context.Context) {
	last, err := e.st.LatestTask(ctx)
	if err != nil {
		return
	}
	if _, changed, _ := e.st.State(ctx, configChangedKey(last.ID)); !changed {
		return
	}
	kept, ok := e.keptChecks(ctx, last.ID)
	if !ok {
		return
	}
	weak := guard.Weakened(kept.Gates, commandGates(e.opt.Gates))
	if len(weak) == 0 {
		return
	}
	e.opt.Reporter.Report(Progress{Stage: StageWarning, At: e.now(), Phase: e.ws.Phase(), Message: fmt.Sprintf(
		"the agent of task %d changed ralph.toml, and this run's gates lack what it took out: %s — put ralph.toml back (ralph snapshot diff %s) unless that was your doing",
		last.Number, strings.Join(weak, ", "), snapshot.TaskPre(last.Number))})
}

// sealOwned notes the harness-owned files as the agent finds them, just
// before it runs, in memory, and returns it as the store keeps it (for a
// resume after a kill while the agent ran), for the iteration's start to
// record; nothing when the files could not be read.
//
// A file larger than sealInline (the task history grows with every task)
// is kept under a key of its own, written only when its content is not
// what this run last wrote there: the seal of every iteration is then a
// few small values, not the history again and again.
func (e *Engine) sealOwned(r *run) []store.StateValue {
	s, err := guard.TakeSeal(e.ws.Root)
	if err != nil {
		e.log.Error("seal the harness's files", "err", err)
		return nil
	}
	r.seal = s
	r.configHash = fileHash(filepath.Join(e.ws.Root, guard.ConfigFile))
	rec := sealRecord{Files: guard.Seal{}, Config: r.configHash}
	var out []store.StateValue
	for name, content := range s {
		if len(content) <= sealInline {
			rec.Files[name] = content
			continue
		}
		h := contentHash(content)
		if rec.Large == nil {
			rec.Large = map[string]string{}
		}
		rec.Large[name] = h
		if r.sealKept[name] != h {
			out = append(out, store.StateValue{Key: sealFileKey(r.taskID, name), Value: content})
			if r.sealKept == nil {
				r.sealKept = map[string]string{}
			}
			r.sealKept[name] = h
		}
	}
	b, _ := json.Marshal(rec)
	return append(out, store.StateValue{Key: sealKey(r.taskID), Value: string(b)})
}

// sealInline is the largest harness file a seal holds in its own record.
const sealInline = 1024

// sealFileKey holds the content of one large file of task taskID's seal.
func sealFileKey(taskID int64, name string) string {
	return sealKey(taskID) + ":" + name
}

// sealRecord is a seal as the store keeps it.
type sealRecord struct {
	Files guard.Seal `json:"files"`
	// Large maps each file kept under a key of its own (sealFileKey) to
	// the hash of the content the seal means.
	Large  map[string]string `json:"large,omitempty"`
	Config string            `json:"config"`
}

// files returns the seal rec stands for, reading its large files; false
// when one of them is not in the store as the record says.
func (rec sealRecord) files(ctx context.Context, st *store.Store, taskID int64) (guard.Seal, bool) {
	s := maps.Clone(rec.Files)
	if s == nil {
		s = guard.Seal{}
	}
	for name, h := range rec.Large {
		content, ok, err := st.State(ctx, sealFileKey(taskID, name))
		if err != nil || !ok || contentHash(content) != h {
			return nil, false
		}
		s[name] = content
	}
	return s, true
}

// afterAgent undoes the agent's writes to the harness's files and notes
// a change of ralph.toml, right after the agent ran: before anything
// reads the phase or the task again, and before the gates run.
func (e *Engine) afterAgent(ctx context.Context, r *run) {
	if r.seal == nil {
		return
	}
	wctx, cancel := detached(ctx)
	defer cancel()
	e.undoOwned(wctx, r, r.seal, "")
	e.noteConfigChange(wctx, r, r.configHash)
	r.seal = nil
	// The store's seal goes with the iteration's end (endIteration), or
	// before the harness writes its files itself (dropSeal). A kill in
	// between leaves it for the resume, whose undo then finds the files
	// already as the seal says.
	r.sealUsed = true
}

// dropSeal deletes the seal the store keeps once the agent's writes are
// undone, before the harness writes its own files (the gates' phase and
// status): a resume must not undo those against it.
func (e *Engine) dropSeal(ctx context.Context, r *run) {
	if !r.sealUsed {
		return
	}
	wctx, cancel := detached(ctx)
	defer cancel()
	if err := e.st.DeleteState(wctx, sealKey(r.taskID)); err != nil {
		e.log.Error("forget the seal of the harness's files", "err", err)
		return
	}
	r.sealUsed = false
}

// usedSeal returns the store's seal key for the iteration's end to delete
// when the agent's writes were undone against it; the end clears
// r.sealUsed once it is recorded, or drops the seal itself (dropSeal).
func (e *Engine) usedSeal(r *run) []string {
	if !r.sealUsed {
		return nil
	}
	return []string{sealKey(r.taskID)}
}

// undoLeftover undoes, at the start of a resumed loop, what an agent that
// was running when ralph died wrote to the harness's files.
func (e *Engine) undoLeftover(ctx context.Context, r *run) {
	raw, ok, err := e.st.State(ctx, sealKey(r.taskID))
	if err != nil || !ok {
		return
	}
	var rec sealRecord
	if err := json.Unmarshal([]byte(raw), &rec); err == nil {
		if files, ok := rec.files(ctx, e.st, r.taskID); ok {
			e.undoOwned(ctx, r, files, " while ralph was not running")
		} else {
			e.log.Error("undo what the agent wrote while ralph was not running: the seal of the harness's files is not whole in the store", "task", r.number)
		}
		e.noteConfigChange(ctx, r, rec.Config)
	}
	_ = e.st.DeleteState(ctx, sealKey(r.taskID))
}

// dropSealFiles deletes the large files of r's task's seal, once the task
// ends.
func (e *Engine) dropSealFiles(ctx context.Context, r *run) {
	if err := e.st.DeleteStatePrefix(ctx, sealFileKey(r.taskID, "")); err != nil {
		e.log.Warn("forget the seal of the harness's files", "task", r.number, "err", err)
	}
	r.sealKept = nil
}

func (e *Engine) undoOwned(ctx context.Context, r *run, s guard.Seal, when string) {
	undone, err := guard.Undo(e.ws.Root, s)
	if err != nil {
		e.log.Error("undo the agent's change to the harness's files", "err", err)
	}
	for _, w := range undone {
		e.tamper(r, w.Message()+when, map[string]any{"what": "file", "file": ".ralph/" + w.Name, "deleted": w.Deleted, "undone": true})
	}
	if len(undone) > 0 {
		r.guardNotes = append(r.guardNotes, guard.AgentNote(undone))
	}
}

// noteConfigChange reports an agent's edit of ralph.toml: the task keeps
// its gates, and the gates the edit weakened are remembered for the next
// run's warning.
func (e *Engine) noteConfigChange(ctx context.Context, r *run, before string) {
	if before == fileHash(filepath.Join(e.ws.Root, guard.ConfigFile)) {
		return
	}
	r.configHash = fileHash(filepath.Join(e.ws.Root, guard.ConfigFile))
	kept, _ := e.keptChecks(ctx, r.taskID)
	now, err := configGates(e.ws.Root)
	var weak []string
	if err == nil {
		weak = guard.Weakened(kept.Gates, now)
	}
	msg := "the agent changed ralph.toml; this task keeps the gates it started with"
	switch {
	case err != nil:
		msg += " (ralph.toml no longer reads: " + err.Error() + ")"
	case len(weak) > 0:
		msg += " (the change weakens " + strings.Join(weak, ", ") + ")"
	}
	e.tamper(r, msg, map[string]any{"what": "config", "file": guard.ConfigFile, "weakened": weak})
	b, _ := json.Marshal(weak)
	_ = e.st.SetState(ctx, configChangedKey(r.taskID), string(b))
}

// fileHash is the hash of a file's content, "" when it cannot be read.
func fileHash(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return contentHash(string(b))
}

// contentHash is the hex SHA-256 of content.
func contentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// tamper records and shows an agent's change to what is not its own.
func (e *Engine) tamper(r *run, text string, data any) {
	b, _ := json.Marshal(data)
	if _, err := e.st.AddEvent(context.Background(), store.Event{TaskID: r.taskID, Iteration: r.iteration, Source: store.SourceHarness, Kind: store.KindTamper, Text: text, Data: string(b)}); err != nil {
		e.log.Error("record event", "err", err)
	}
	e.report(r, Progress{Stage: StageWarning, Message: text})
}

// writeGuardNotes adds what the agent must know about its undone changes
// to feedback.md, before the prompt that shows it is built.
func (e *Engine) writeGuardNotes(r *run) {
	if len(r.guardNotes) == 0 {
		return
	}
	notes := "## The harness undid changes\n\n" + strings.Join(slices.Compact(r.guardNotes), "\n\n") + "\n"
	old, _ := e.ws.Read(workspace.Feedback)
	if strings.TrimSpace(old) != "" {
		notes = strings.TrimRight(old, "\n") + "\n\n" + notes
	}
	if err := e.ws.Write(workspace.Feedback, notes); err != nil {
		e.log.Error("write feedback.md", "err", err)
		return
	}
	r.guardNotes = nil
}

// tamperSummary is what the end of a run says about the agent's changes
// the harness undid or held: "" when there were none.
func (e *Engine) tamperSummary(ctx context.Context, r *run) string {
	evs, err := e.st.EventsPage(ctx, store.EventQuery{TaskID: r.taskID, Kind: store.KindTamper, Limit: 1000})
	if err != nil || len(evs) == 0 {
		return ""
	}
	var what []string
	for _, ev := range slices.Backward(evs) {
		var d struct {
			File string `json:"file"`
			What string `json:"what"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &d)
		w := d.File
		if w == "" {
			w = d.What
		}
		if w != "" && !slices.Contains(what, w) {
			what = append(what, w)
		}
	}
	s := "s"
	if len(evs) == 1 {
		s = ""
	}
	return fmt.Sprintf("the agent tampered with what is not its own %d time%s (%s): see ralph log", len(evs), s, strings.Join(what, ", "))
}

// guardProtected checks, when the agent asks to finish, the files the
// gates depend on against task-N-pre. A deleted or modified one holds the
// completion as [guard] on_change says: a person decides (ask), the files
// are put back (restore), the run ends (fail) or the change is only
// recorded (allow). A non-empty reason ends the run; the gates run
// otherwise, on the files as they then are.
func (e *Engine) guardProtected(ctx context.Context, r *run) (Reason, string) {
	if e.opt.Snapshots == nil {
		return "", ""
	}
	pre := snapshot.TaskPre(r.number)
	if ok, err := e.opt.Snapshots.Exists(ctx, pre); err != nil || !ok {
		return "", "" // the first task on an empty tree: every file is new
	}
	globs := e.opt.Guard.Protect
	if globs == nil {
		globs = config.DefaultProtect
	}
	p := guard.Protection{Globs: globs, Gates: commandGates(e.opt.Gates)}
	changes, err := p.Changes(ctx, watchedDiff{e.opt.Snapshots, e, r}, e.ws.Root, pre)
	if err != nil {
		e.log.Error("compare the files the gates depend on", "err", err)
		return "", ""
	}
	if len(changes) == 0 {
		return "", ""
	}
	fp := guard.Fingerprint(e.ws.Root, changes)
	if have, _, _ := e.st.State(ctx, approvedKey(r.taskID)); have == fp {
		return "", "" // a person let exactly these changes through
	}
	lines := make([]string, len(changes))
	for i, c := range changes {
		lines[i] = c.Line()
	}
	list := strings.Join(lines, ", ")
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	data := map[string]any{"what": "protected", "file": strings.Join(paths, ", "), "files": changes, "policy": e.opt.Guard.OnChange}
	switch e.opt.Guard.OnChange {
	case config.GuardAllow:
		e.tamper(r, "the agent changed files the gates depend on: "+list+" (allowed by [guard] on_change)", data)
		return "", ""
	case config.GuardFail:
		e.tamper(r, "the agent changed files the gates depend on: "+list, data)
		return ProtectedChanged, fmt.Sprintf("the agent changed files the gates depend on: %s — see ralph snapshot diff %s; [guard] on_change = \"ask\" lets a person decide", list, pre)
	case config.GuardRestore:
		e.tamper(r, "the agent changed files the gates depend on: "+list+"; the harness put them back", data)
		e.restoreProtected(ctx, r, pre, changes, "[guard] on_change = \"restore\"")
		return "", ""
	}
	e.tamper(r, "the agent changed files the gates depend on: "+list+"; a person decides", data)
	// The person may change the tree while the request waits.
	r.endRead.drop()
	req, end, detail := e.askProtected(ctx, r, fp, guard.Request(changes, pre))
	if end != "" {
		return end, detail
	}
	if req.Status == store.HumanApproved {
		_ = e.st.SetState(ctx, approvedKey(r.taskID), fp)
		e.harnessEvent(r, "guard-approved", fmt.Sprintf("request %d approved the agent's change to %s; the gates run with it", req.ID, list), "")
		return "", ""
	}
	why := "rejected"
	if req.Status == store.HumanTimeout {
		why = "not answered in time"
	}
	e.restoreProtected(ctx, r, pre, changes, fmt.Sprintf("request %d was %s", req.ID, why))
	return "", ""
}

// watchedDiff is the snapshot store as the protected-files check reads
// it: its diff of the working tree stages only what r's Tracker saw change
// since the tree it last recorded, when the Tracker knows.
type watchedDiff struct {
	*snapshot.Repo
	e *Engine
	r *run
}

// Diff lists the files that differ between the snapshot called name and
// the working tree.
func (s watchedDiff) Diff(ctx context.Context, name string) ([]snapshot.FileChange, error) {
	// A whole read: an agent could otherwise change a protected file
	// where the Tracker does not look (through a hard link from its
	// temporary directory). What the Tracker saw so far is in it, so its
	// paths are taken first; task-N-post shares the read (endRead).
	s.e.treeChanges(ctx, s.r, true)
	fcs, tree, err := s.Repo.DiffChanged(ctx, name, snapshot.Changes{})
	s.r.tree.recorded(tree)
	s.r.endRead = endRead{shared: err == nil}
	return fcs, err
}

// askProtected makes (or finds again, after a resume) the request about
// the changes with fingerprint fp and waits for its answer.
func (e *Engine) askProtected(ctx context.Context, r *run, fp, prompt string) (store.HumanRequest, Reason, string) {
	key := "guard:" + fp
	req, ok, err := e.st.LatestHumanRequest(ctx, r.taskID, key)
	if err != nil {
		return req, AgentError, err.Error()
	}
	if !ok {
		timeout := e.opt.Guard.Timeout
		if timeout <= 0 {
			timeout = DefaultHumanTimeout
		}
		_ = e.ws.SetStatus(workspace.StatusWaiting)
		req, err = e.st.RequestHuman(ctx, store.HumanRequest{TaskID: r.taskID, StepKey: key, Type: store.HumanConfirmation, Prompt: prompt, TimeoutAt: e.now().Add(timeout)})
		if err != nil {
			return req, AgentError, err.Error()
		}
		e.harnessEvent(r, "guard-request", prompt, "")
		e.notify(ctx, fmt.Sprintf("ralph: task %d: the agent changed files the gates depend on (request %d) — `ralph pending` shows the diff; answer with `ralph approve %d` or `ralph reject %d`", r.number, req.ID, req.ID, req.ID))
	}
	if req.Status != store.HumanPending {
		return req, "", ""
	}
	return e.waitHuman(ctx, r, req)
}

// restoreProtected puts the changed protected files back and tells the
// agent why.
func (e *Engine) restoreProtected(ctx context.Context, r *run, pre string, changes []guard.Change, why string) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	r.endRead.wrote(paths...)
	if err := guard.Restore(ctx, e.opt.Snapshots, e.ws.Root, pre, changes); err != nil {
		e.harnessEvent(r, "guard-error", "could not put back every protected file: "+err.Error(), "")
	}
	e.harnessEvent(r, "guard-restored", fmt.Sprintf("put back %s as %s has them (%s)", strings.Join(paths, ", "), pre, why), "")
	r.guardNotes = append(r.guardNotes, fmt.Sprintf(
		"The harness put back %s as they were when the task started (%s): the gates depend on them. Make the gates pass without deleting or changing existing tests, gate scripts or ralph.toml, and without a new test runner configuration or TestMain that changes how they run; adding new test files is welcome.",
		strings.Join(paths, ", "), why))
}
