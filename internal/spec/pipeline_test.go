package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(root, rel string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// newRepo makes a git repository with .ralph/ initialised, a source file
// and the given specs, all committed.
func newRepo(t *testing.T, specs map[string]string) string {
	t.Helper()
	root := t.TempDir()
	run(t, root, "git", "init", "-q")
	run(t, root, "git", "config", "user.name", "ralph test")
	run(t, root, "git", "config", "user.email", "test@ralph.invalid")
	if err := (&workspace.Workspace{Root: root}).Init(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "main.go", "package main\n")
	for rel, body := range specs {
		writeFile(t, root, "specs/"+rel, body)
	}
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "commit", "-qm", "init")
	return root
}

// agentScript builds a script agent from entries, each {actions, final}.
func agentScript(t *testing.T, entries ...script.Iteration) *script.Agent {
	t.Helper()
	data, err := json.Marshal(script.Script{Iterations: entries})
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return script.New(s)
}

func write(path, content string) script.Action {
	return script.Action{Tool: "write", Path: path, Content: content}
}

func sh(argv ...string) script.Action { return script.Action{Tool: "shell", Argv: argv} }

// commit is an implementer entry that writes a file and commits it.
func commit(path, content, final string) script.Iteration {
	return script.Iteration{Actions: []script.Action{write(path, content), sh("git", "add", "-A"), sh("git", "commit", "-qm", "implement "+path)}, Final: final}
}

const (
	complete = "Done.\n<promise>COMPLETE</promise>"
	pass     = "Everything the spec asks for is there.\n<promise>PASS</promise>"
)

type harness struct {
	root  string
	st    *store.Store
	out   bytes.Buffer
	opt   Options
	specs []Spec
}

func newHarness(t *testing.T, root string) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	snaps, err := snapshot.Open(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := NewLayout(root, "specs")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := layout.Discover()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{root: root, st: st, specs: specs}
	h.opt = Options{
		Layout:    layout,
		Snapshots: snaps,
		Records:   st,
		LogDir:    filepath.Join(root, ".ralph", "logs", "specs"),
		Progress:  &h.out,
	}
	return h
}

func (h *harness) run(t *testing.T) Report {
	t.Helper()
	rep, err := New(h.opt).Run(context.Background(), h.specs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, h.out.String())
	}
	t.Logf("progress:\n%s", h.out.String())
	return rep
}

// logs returns the spec's single run folder.
func (h *harness) logs(t *testing.T, id string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(h.root, ".ralph", "logs", "specs", "runs", id, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run folders for %s: %v", id, dirs)
	}
	return dirs[0]
}

func (h *harness) record(t *testing.T, rel string) store.SpecRecord {
	t.Helper()
	rec, ok, err := h.st.Spec(context.Background(), rel)
	if !ok || err != nil {
		t.Fatalf("record %s: ok=%v err=%v", rel, ok, err)
	}
	return rec
}

func planInfo(t *testing.T, root, id string) PlanInfo {
	t.Helper()
	var info PlanInfo
	if err := json.Unmarshal([]byte(readFile(t, root, "specs/plans/"+id+".json")), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func wantOutcome(t *testing.T, rep Report, want ...Outcome) {
	t.Helper()
	if len(rep.Results) != len(want) {
		t.Fatalf("results = %+v", rep.Results)
	}
	for i, r := range rep.Results {
		if r.Outcome != want[i] {
			t.Errorf("%s: outcome %s (%s), want %s", r.Spec.Rel, r.Outcome, r.Reason, want[i])
		}
	}
}

func TestFreshSpecDoneInOnePass(t *testing.T) {
	root := newRepo(t, map[string]string{"area/0001-foo.md": "# Foo\n\nWrite foo.txt containing foo.\n"})
	writeFile(t, root, Scratchpad, "remember: keep it small\n")
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{
		write("specs/plans/area/0001-foo.md", "# Plan: area/0001-foo\n\n## Steps\n1. write foo.txt\n"),
		write(Scratchpad, "remember: keep it small\nplanned foo\n"),
	}, Final: "Plan written.\n<promise>COMPLETE</promise>"})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	before := run(t, root, "git", "rev-parse", "HEAD")

	rep := h.run(t)
	wantOutcome(t, rep, Done)

	info := planInfo(t, root, "area/0001-foo")
	if info.Status != PlanActive || info.Attempt != 1 || info.CreatedAtUTC == "" || info.InvalidationReason != nil || info.SpecRel != "area/0001-foo.md" {
		t.Errorf("plan info = %+v", info)
	}
	done := readFile(t, root, "specs/done/area/0001-foo.md")
	if !strings.Contains(done, "Everything the spec asks for is there.") || strings.Contains(done, "<promise>") {
		t.Errorf("done marker:\n%s", done)
	}
	if exists(root, "specs/candidates/area/0001-foo.json") {
		t.Error("candidate left behind")
	}
	logs := h.logs(t, "area/0001-foo")
	for _, name := range []string{"plan-attempt-1.log", "impl-attempt-1.log", "verify.log"} {
		if !exists(logs, name) {
			t.Errorf("missing log %s", name)
		}
	}
	plan := readFile(t, logs, "plan-attempt-1.log")
	for _, want := range []string{"You are the PLANNER", "Write foo.txt containing foo.", "remember: keep it small", "Plan file: specs/plans/area/0001-foo.md", "plan accepted"} {
		if !strings.Contains(plan, want) {
			t.Errorf("planner log lacks %q", want)
		}
	}
	impl := readFile(t, logs, "impl-attempt-1.log")
	paths, planAt, mission := strings.Index(impl, "## Paths"), strings.Index(impl, "## Implementation Plan"), strings.Index(impl, "## Your mission")
	if paths < 0 || planAt < paths || mission < planAt || !strings.Contains(impl[planAt:mission], "1. write foo.txt") {
		t.Errorf("the plan is not between the paths and the mission:\n%s", impl)
	}
	verify := readFile(t, logs, "verify.log")
	for _, want := range []string{"You are the VERIFIER", "+foo", "1. write foo.txt", "PLAN_INVALIDATION: <one line", "verdict: pass", before[:12]} {
		if !strings.Contains(verify, want) {
			t.Errorf("verifier log lacks %q", want)
		}
	}
	rec := h.record(t, "area/0001-foo.md")
	if rec.State != StateDone || rec.PlanAttempt != 1 || rec.ImplAttempts != 1 || rec.VerifyAttempts != 1 {
		t.Errorf("record = %+v", rec)
	}

	// A second run skips it; --force runs it again on the active plan.
	h.out.Reset()
	wantOutcome(t, h.run(t), Skipped)
	h.opt.Force = true
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo again\n", complete))
	h.out.Reset()
	wantOutcome(t, h.run(t), Done)
	if rec := h.record(t, "area/0001-foo.md"); rec.PlanAttempt != 1 || rec.ImplAttempts != 2 {
		t.Errorf("forced run re-planned or lost count: %+v", rec)
	}
}

func TestImplementationBugSentBackOnce(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt containing foo and bar.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n1. foo.txt\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete), commit("foo.txt", "foo\nbar\n", complete))
	h.opt.Verifier = agentScript(t,
		script.Iteration{Final: "foo.txt lacks bar.\n<promise>FAIL</promise>"},
		script.Iteration{Final: pass})
	rep := h.run(t)
	wantOutcome(t, rep, Done)
	logs := h.logs(t, "0001-foo")
	impl2 := readFile(t, logs, "impl-attempt-2.log")
	if !strings.Contains(impl2, "## Feedback from the previous attempt") || !strings.Contains(impl2, "foo.txt lacks bar.") {
		t.Errorf("second attempt did not get the verifier's report:\n%s", impl2)
	}
	if strings.Contains(readFile(t, logs, "impl-attempt-1.log"), "## Feedback") {
		t.Error("first attempt had feedback")
	}
	// The second verification sees the whole change, both commits.
	verify := readFile(t, logs, "verify.log")
	if last := verify[strings.LastIndex(verify, "=== verifier"):]; !strings.Contains(last, "+bar") {
		t.Errorf("second verification's diff:\n%s", last)
	}
	if exists(logs, "plan-attempt-2.log") {
		t.Error("an ordinary failure re-planned")
	}
	rec := h.record(t, "0001-foo.md")
	if rec.ImplAttempts != 2 || rec.VerifyAttempts != 2 || rec.PlanAttempt != 1 {
		t.Errorf("record = %+v", rec)
	}
}

func TestPlanInvalidatedOnceThenReplanned(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Make main.go print hello.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t,
		script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan v1\nwrite hello.txt\n")}, Final: complete},
		script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan v2\nedit main.go\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("hello.txt", "hello\n", complete), commit("main.go", "package main\n\nfunc main() { println(\"hello\") }\n", complete))
	h.opt.Verifier = agentScript(t,
		script.Iteration{Final: "Nothing prints hello.\n- PLAN_INVALIDATION: the spec is about main.go, not a text file\n<promise>FAIL</promise>"},
		script.Iteration{Final: pass})
	rep := h.run(t)
	wantOutcome(t, rep, Done)

	if got := readFile(t, root, "specs/plans/0001-foo.attempt-1.md"); !strings.Contains(got, "Plan v1") {
		t.Errorf("archived plan = %q", got)
	}
	if got := readFile(t, root, "specs/plans/0001-foo.md"); !strings.Contains(got, "Plan v2") {
		t.Errorf("new plan = %q", got)
	}
	info := planInfo(t, root, "0001-foo")
	if info.Status != PlanActive || info.Attempt != 2 || info.Reason() != "the spec is about main.go, not a text file" || info.InvalidatedAtUTC == nil {
		t.Errorf("plan info = %+v", info)
	}
	replan := readFile(t, h.logs(t, "0001-foo"), "plan-attempt-2.log")
	for _, want := range []string{"## Re-planning", "the spec is about main.go, not a text file", "# Plan v1"} {
		if !strings.Contains(replan, want) {
			t.Errorf("re-planning prompt lacks %q", want)
		}
	}
	if rec := h.record(t, "0001-foo.md"); rec.PlanAttempt != 2 || rec.ImplAttempts != 2 {
		t.Errorf("record = %+v", rec)
	}
}

func TestInvalidatePlanState(t *testing.T) {
	root := t.TempDir()
	l, _ := NewLayout(root, "specs")
	s := Spec{Rel: "a/b.md", ID: "a/b"}
	writeFile(t, root, "specs/plans/a/b.md", "plan one")
	if err := l.SavePlanInfo(s, PlanInfo{Status: PlanActive, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.InvalidatePlan(s, "wrong files", testNow()); err != nil {
		t.Fatal(err)
	}
	info, _ := l.LoadPlanInfo(s)
	if info.Status != PlanInvalidated || info.Reason() != "wrong files" || *info.InvalidatedAtUTC != "2026-02-08T12:00:00Z" {
		t.Errorf("info = %+v", info)
	}
	if exists(root, "specs/plans/a/b.md") || readFile(t, root, "specs/plans/a/b.attempt-1.md") != "plan one" {
		t.Error("plan not archived")
	}
	pos, err := l.Position(s, testNow())
	if err != nil || pos.Step != StepPlan || pos.PrevPlan != "plan one" || pos.Reason != "wrong files" {
		t.Errorf("position = %+v, %v", pos, err)
	}
}

func TestPlannerEditingSourceFailsAndIsReverted(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	writeFile(t, root, "untracked.txt", "mine\n")
	h := newHarness(t, root)
	head := run(t, root, "git", "rev-parse", "HEAD")
	h.opt.Planner = agentScript(t,
		script.Iteration{Actions: []script.Action{
			write("specs/plans/0001-foo.md", "# Plan\n"),
			write("main.go", "package main // planner was here\n"),
			{Tool: "delete", Path: "untracked.txt"},
			write("new.go", "package main\n"),
		}, Final: complete},
		script.Iteration{Actions: []script.Action{
			write("specs/plans/0001-foo.md", "# Plan\n"),
			sh("git", "commit", "-q", "--allow-empty", "-m", "planner commit"),
		}, Final: complete},
		script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan, read-only this time\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	h.opt.MaxAttempts = 3
	wantOutcome(t, h.run(t), Done)

	logs := h.logs(t, "0001-foo")
	first := readFile(t, logs, "plan-attempt-1.log")
	if !strings.Contains(first, "attempt failed: planner changed files outside specs/plans/ and SCRATCHPAD.md: main.go, new.go, untracked.txt (reverted)") {
		t.Errorf("first planner log:\n%s", first)
	}
	if !strings.Contains(readFile(t, logs, "plan-attempt-2.log"), "made a commit (reverted)") {
		t.Error("planner commit not caught")
	}
	if got := run(t, root, "git", "log", "--format=%s"); strings.Contains(got, "planner commit") {
		t.Errorf("planner commit kept:\n%s", got)
	}
	if got := run(t, root, "git", "rev-parse", "HEAD~1"); got != head {
		t.Errorf("history after the run: HEAD~1 = %s, want %s", got, head)
	}
	if got := readFile(t, root, "main.go"); got != "package main\n" {
		t.Errorf("main.go = %q", got)
	}
	if exists(root, "new.go") || readFile(t, root, "untracked.txt") != "mine\n" {
		t.Error("planner's file changes not reverted")
	}
	if info := planInfo(t, root, "0001-foo"); info.Attempt != 3 {
		t.Errorf("plan info = %+v", info)
	}
}

func TestPlannerWithoutMagicPhraseFailsAfterMaxAttempts(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{
		Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n")},
		Final:   "I wrote the plan. <promise>COMPLETE</promise> is what I'd say, but I'm not sure.",
	})
	h.opt.Implementer = agentScript(t, script.Iteration{Final: "never called"})
	h.opt.Verifier = agentScript(t, script.Iteration{Final: "never called"})
	rep := h.run(t)
	wantOutcome(t, rep, Failed)
	if r := rep.Results[0].Reason; !strings.Contains(r, "planner's final message does not end with <promise>COMPLETE</promise>") || !strings.Contains(r, "after 3 failed attempts") {
		t.Errorf("reason = %q", r)
	}
	logs := h.logs(t, "0001-foo")
	for n := 1; n <= 3; n++ {
		if !exists(logs, PlanLog(n)) {
			t.Errorf("no %s", PlanLog(n))
		}
	}
	if exists(logs, PlanLog(4)) || exists(logs, ImplLog(1)) {
		t.Error("ran past max_attempts")
	}
	if exists(root, "specs/plans/0001-foo.md") || exists(root, "specs/plans/0001-foo.json") {
		t.Error("a rejected plan was kept")
	}
	if rec := h.record(t, "0001-foo.md"); rec.State != StateFailed || rec.PlanAttempt != 3 {
		t.Errorf("record = %+v", rec)
	}
}

// An index lock that a killed git left makes every commit fail: the
// failure names it rather than only saying that no commit was made.
func TestImplementerNoCommitNamesTheIndexLock(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, script.Iteration{Actions: []script.Action{
		sh("touch", ".git/index.lock"), write("foo.txt", "foo\n"), sh("git", "add", "-A"), sh("git", "commit", "-qm", "implement foo")}, Final: complete})
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	rep := h.run(t)
	wantOutcome(t, rep, Failed)
	if r := rep.Results[0].Reason; !strings.Contains(r, "implementer made no commit (HEAD did not move) while .git/index.lock exists") {
		t.Errorf("reason = %q", r)
	}
}

func TestHandWrittenPlanIsAdopted(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	writeFile(t, root, "specs/plans/0001-foo.md", "# My own plan\n1. write foo.txt\n")
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Final: "must not run"})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	info := planInfo(t, root, "0001-foo")
	if info.Status != PlanActive || info.Attempt != 1 {
		t.Errorf("plan info = %+v", info)
	}
	logs := h.logs(t, "0001-foo")
	if exists(logs, PlanLog(1)) {
		t.Error("the planner ran over a hand-written plan")
	}
	if !strings.Contains(readFile(t, logs, ImplLog(1)), "# My own plan") {
		t.Error("implementer did not get the hand-written plan")
	}
	if !strings.Contains(h.out.String(), "adopted the hand-written plan specs/plans/0001-foo.md") {
		t.Errorf("progress:\n%s", h.out.String())
	}
}

func TestResumeAtVerify(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	base := run(t, root, "git", "rev-parse", "HEAD")
	writeFile(t, root, "foo.txt", "foo\n")
	run(t, root, "git", "add", "foo.txt")
	run(t, root, "git", "commit", "-qm", "foo")
	cand := run(t, root, "git", "rev-parse", "HEAD")
	h := newHarness(t, root)
	l := h.opt.Layout
	s := h.specs[0]
	writeFile(t, root, "specs/plans/0001-foo.md", "# Plan\n")
	if err := l.SavePlanInfo(s, PlanInfo{Status: PlanActive, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := l.SaveCandidate(s, Candidate{Commit: cand, BaseCommit: base, PlanAttempt: 1, ImplAttempt: 1}); err != nil {
		t.Fatal(err)
	}
	h.opt.Planner = agentScript(t, script.Iteration{Final: "must not run"})
	h.opt.Implementer = agentScript(t, script.Iteration{Final: "must not run"})
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	logs := h.logs(t, "0001-foo")
	if exists(logs, PlanLog(1)) || exists(logs, ImplLog(1)) {
		t.Error("resumed before verify")
	}
	if !strings.Contains(readFile(t, logs, VerifyLog), "+foo") {
		t.Error("verifier did not see the candidate's diff")
	}
}

func TestImplementerMustCommitAndPassGates(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n")}, Final: complete})
	h.opt.Implementer = agentScript(t,
		script.Iteration{Actions: []script.Action{write("foo.txt", "foo\n")}, Final: complete}, // no commit
		commit("foo.txt", "TODO\n", complete),                                                  // the gate fails
		commit("foo.txt", "foo\n", complete))
	h.opt.Gates = []gate.Gate{&gate.Command{GateName: "no-todo", Argv: []string{"sh", "-c", "! grep -q TODO foo.txt"}}}
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	logs := h.logs(t, "0001-foo")
	if !strings.Contains(readFile(t, logs, ImplLog(1)), "implementer made no commit") {
		t.Error("a missing commit was accepted")
	}
	impl3 := readFile(t, logs, ImplLog(3))
	if !strings.Contains(readFile(t, logs, ImplLog(2)), "gates failed: no-todo (`sh -c ! grep -q TODO foo.txt` exited with status 1)") || !strings.Contains(impl3, "FAIL [no-todo]") {
		t.Errorf("gate failure not fed back:\n%s", impl3)
	}
}

func TestVerdicts(t *testing.T) {
	p := DefaultPhrases()
	tests := []struct {
		final  string
		want   Verdict
		reason string
	}{
		{"ok\n<promise>PASS</promise>\n\n", VerdictPass, ""},
		{"<promise>PASS</promise> but really\n", VerdictNone, ""},
		{"bad\n<promise>FAIL</promise>", VerdictFail, ""},
		{"bad\nPLAN_INVALIDATION: wrong layer\n<promise>FAIL</promise>", VerdictInvalidate, "wrong layer"},
		{"`PLAN_INVALIDATION: quoted`\n<promise>FAIL</promise>", VerdictInvalidate, "quoted"},
		{"PLAN_INVALIDATION: not a failure\n<promise>PASS</promise>", VerdictPass, ""},
		{"no verdict", VerdictNone, ""},
	}
	for _, tt := range tests {
		v, r := Judge(tt.final, p)
		if v != tt.want || r != tt.reason {
			t.Errorf("Judge(%q) = %s, %q; want %s, %q", tt.final, v, r, tt.want, tt.reason)
		}
	}
}

func TestDiscoverAndSelect(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"b.md", "a/z.md", "a/c.md", "plans/a/c.md", "candidates/x.md", "done/b.md", "notes.txt", ".hidden/x.md", "a/plans/deep.md"} {
		writeFile(t, root, "specs/"+rel, "x")
	}
	l, _ := NewLayout(root, "specs")
	specs, err := l.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range specs {
		got = append(got, s.Rel)
	}
	if want := "a/c.md a/plans/deep.md a/z.md b.md"; strings.Join(got, " ") != want {
		t.Errorf("specs = %v, want %s", got, want)
	}
	if sel, err := Select(specs, "a"); err != nil || len(sel) != 3 {
		t.Errorf("--only a = %v, %v", sel, err)
	}
	if sel, err := Select(specs, "b"); err != nil || len(sel) != 1 || sel[0].ID != "b" {
		t.Errorf("--only b = %v, %v", sel, err)
	}
	if _, err := Select(specs, "nope.md"); err == nil {
		t.Error("--only nope.md matched")
	}
	if _, err := NewLayout(root, "../elsewhere"); err == nil {
		t.Error("a specs folder outside the workspace was accepted")
	}
}

func TestVerifierWithoutVerdictVerifiesAgain(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: "I am not sure."}, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	if rec := h.record(t, "0001-foo.md"); rec.ImplAttempts != 1 || rec.VerifyAttempts != 2 {
		t.Errorf("record = %+v", rec)
	}
}

func TestPartialPlanOfAKilledPlannerIsDiscarded(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	// A planner was killed after writing half a plan: no json, and the
	// store says the spec was being planned.
	writeFile(t, root, "specs/plans/0001-foo.md", "# Pla")
	if err := h.st.PutSpec(context.Background(), store.SpecRecord{ID: "0001-foo.md", State: StatePlanning, PlanAttempt: 1}); err != nil {
		t.Fatal(err)
	}
	h.opt.Planner = agentScript(t, script.Iteration{Final: "no plan"},
		script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan, whole\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	if info := planInfo(t, root, "0001-foo"); info.Attempt != 2 {
		t.Errorf("plan info = %+v", info)
	}
	if got := readFile(t, root, "specs/plans/0001-foo.md"); got != "# Plan, whole\n" {
		t.Errorf("plan = %q", got)
	}
}

// An implementer killed after it committed the spec's work, before its
// final message: the resumed attempt is shown those commits as its own
// and continues from them. It does the work no second time, and an
// attempt that finds nothing left to do is accepted without a new commit.
func TestResumedImplementerContinuesFromItsCommits(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	base := run(t, root, "git", "rev-parse", "HEAD")
	h := newHarness(t, root)
	l := h.opt.Layout
	s := h.specs[0]
	writeFile(t, root, "specs/plans/0001-foo.md", "# Plan\n")
	if err := l.SavePlanInfo(s, PlanInfo{Status: PlanActive, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	// Attempt 1 committed foo.txt, then ralph was killed.
	writeFile(t, root, "foo.txt", "foo\n")
	run(t, root, "git", "add", "foo.txt")
	run(t, root, "git", "commit", "-qm", "implement foo.txt")
	writeFile(t, root, "notes.md", "what is left\n") // and left this uncommitted
	rec := store.SpecRecord{ID: "0001-foo.md", State: StateImplementing, PlanAttempt: 1, ImplAttempts: 1, BaseCommit: base, LastResult: "implementation attempt 1" + underWay}
	if err := h.st.PutSpec(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	h.opt.Planner = agentScript(t, script.Iteration{Final: "must not run"})
	// The resumed implementer reads what it was told and finds the work done.
	h.opt.Implementer = agentScript(t, script.Iteration{Final: "foo.txt is committed already.\n<promise>COMPLETE</promise>"})
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	wantOutcome(t, h.run(t), Done)
	prompt := readFile(t, h.logs(t, "0001-foo"), ImplLog(2))
	if !strings.Contains(prompt, "Attempt 1 was interrupted") || !strings.Contains(prompt, "implement foo.txt") || !strings.Contains(prompt, "?? notes.md") {
		t.Errorf("the resumed implementer was not shown its first attempt's commit:\n%s", prompt)
	}
	if log := run(t, root, "git", "log", "--format=%s", base+"..HEAD"); log != "implement foo.txt" {
		t.Errorf("commits since the base:\n%s\nwant the first attempt's alone", log)
	}
	if got := h.record(t, "0001-foo.md"); got.ImplAttempts != 2 || got.State != StateDone {
		t.Errorf("record = %+v, want done after 2 implementation attempts", got)
	}
}

// A failed attempt is no interrupted one, even when each step is a run of
// its own (Pipeline.Step, as a Temporal worker runs them): the next
// attempt gets its feedback and must commit.
func TestFailedImplementerAttemptIsNotTakenForInterrupted(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n")}, Final: complete})
	h.opt.Implementer = agentScript(t,
		commit("foo.txt", "TODO\n", "no promise"),
		script.Iteration{Final: complete}, // no commit: refused
		commit("foo.txt", "foo\n", complete))
	h.opt.Verifier = agentScript(t, script.Iteration{Final: pass})
	p := New(h.opt)
	for i := 0; ; i++ {
		rep, err := p.Step(context.Background(), h.specs[0])
		if err != nil {
			t.Fatal(err)
		}
		if rep.Done {
			break
		}
		if i > 8 {
			t.Fatalf("not done after %d steps: %+v", i, rep)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(root, ".ralph", "logs", "specs", "runs", "0001-foo", "*", ImplLog(2)))
	if len(logs) != 1 {
		t.Fatalf("logs of attempt 2: %v", logs)
	}
	second := readFile(t, filepath.Dir(logs[0]), ImplLog(2))
	if strings.Contains(second, "was interrupted") {
		t.Error("a failed attempt was presented as interrupted")
	}
	if !strings.Contains(second, "implementer made no commit") {
		t.Errorf("an attempt with no commit after a failed one was accepted:\n%s", second)
	}
}
