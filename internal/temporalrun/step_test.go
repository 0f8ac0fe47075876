package temporalrun

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ralph-harness/ralph/internal/store"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// fakeRalph stands in for ralph specs run --step-result: it checks the
// record the worker seeded, writes a plan and reports a plan step.
const fakeRalph = `#!/bin/sh
set -e
for a in "$@"; do case "$a" in --step-result=*) out="${a#--step-result=}";; --only=bad) exit 2;; esac; done
test -f .ralph/ralph.db
mkdir -p specs/plans
echo "# Plan" > specs/plans/0001-a.md
printf '{"step":"plan","record":{"id":"0001-a.md","state":"planned","plan_attempt":2,"cost_usd":1.5}}' > "$out"
`

// SpecStep runs one step in a fresh worktree at the input head, commits
// and force-pushes what it left, moves the step's .ralph/ to runs/ and
// removes the worktree; a usage error is not retried.
func TestSpecStepActivity(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	work := filepath.Join(root, "work")
	gitT(t, root, "init", "-q", "--bare", "-b", "main", remote)
	gitT(t, root, "init", "-q", "-b", "main", work)
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, work, "add", "-A")
	gitT(t, work, "commit", "-qm", "init")
	base := gitT(t, work, "rev-parse", "HEAD")
	gitT(t, work, "push", "-q", "file://"+remote, "HEAD:refs/ralph/base/"+base)
	bin := filepath.Join(root, "ralph")
	if err := os.WriteFile(bin, []byte(fakeRalph), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	cache := filepath.Join(root, "cache")
	r := &Runner{Cache: cache, Ralph: bin, Identity: "w1", Log: slog.New(slog.DiscardHandler)}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(r.SpecStep, activity.RegisterOptions{Name: StepActivityName})
	job := Job{Kind: KindSpec, Name: "0001-a", Remote: "file://" + remote, BaseRef: "refs/ralph/base/" + base, Base: base,
		Branch: "ralph/spec/0001-a", Args: []string{"specs", "run", "--only=0001-a.md", "--", "specs"}}
	in := StepInput{Job: job, N: 1, Head: base, Record: store.SpecRecord{ID: "0001-a.md", PlanAttempt: 1, CostUSD: 1},
		Answers: []HumanAnswer{{Key: "spec:0001-a.md:plan-1:entry-0", Status: store.HumanApproved}}}
	v, err := env.ExecuteActivity(StepActivityName, in)
	if err != nil {
		t.Fatal(err)
	}
	var res StepResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	if res.Step != "plan" || res.Record.PlanAttempt != 2 || res.Worker != "w1" || res.CostUSD != 0.5 {
		t.Errorf("result = %+v", res)
	}
	pushed := gitT(t, root, "--git-dir", remote, "rev-parse", "refs/heads/ralph/spec/0001-a")
	if pushed != res.Commit || pushed == base {
		t.Errorf("pushed %s, result commit %s, base %s", pushed, res.Commit, base)
	}
	if files := gitT(t, root, "--git-dir", remote, "show", "--name-only", "--format=%s", pushed); !strings.Contains(files, "specs/plans/0001-a.md") || strings.Contains(files, ".ralph") {
		t.Errorf("the step's commit:\n%s", files)
	}
	transcript := filepath.Join(cache, "runs", "default-test-workflow-id", "1-plan")
	if res.Transcript != "w1:"+transcript {
		t.Errorf("transcript = %s", res.Transcript)
	}
	st, err := store.Open(t.Context(), filepath.Join(transcript, "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rec, ok, _ := st.Spec(t.Context(), "0001-a.md"); !ok || rec.PlanAttempt != 1 {
		t.Errorf("the seeded record in the transcript: %+v, %v", rec, ok)
	}
	if req, ok, _ := st.LatestHumanRequest(t.Context(), 0, in.Answers[0].Key); !ok || req.Status != store.HumanApproved {
		t.Errorf("the seeded answer: %+v, %v", req, ok)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*")); len(left) != 0 {
		t.Errorf("worktrees left: %v", left)
	}
	repo := r.repoDir(job.Remote)
	if wts := gitT(t, repo, "worktree", "list"); strings.Count(wts, "\n") != 0 {
		t.Errorf("the clone lists worktrees:\n%s", wts)
	}

	// The next step starts from the head the first pushed.
	in.N, in.Head = 2, res.Commit
	v, err = env.ExecuteActivity(StepActivityName, in)
	if err != nil {
		t.Fatal(err)
	}
	var res2 StepResult
	if err := v.Get(&res2); err != nil {
		t.Fatal(err)
	}
	if res2.Commit != res.Commit {
		t.Errorf("step 2 left %s, want %s: it starts there and writes the same plan", res2.Commit, res.Commit)
	}

	in.N, in.Job.Args = 3, []string{"specs", "run", "--only=bad"}
	_, err = env.ExecuteActivity(StepActivityName, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Errorf("a usage error: %v, want a non-retryable error", err)
	}
}
