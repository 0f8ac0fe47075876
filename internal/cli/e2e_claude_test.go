package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// claudeConfig returns a ralph.toml that runs the real Claude Code against
// srv with an isolated HOME, plus extra [limits] lines.
func claudeConfig(t *testing.T, srv *testutil.AnthropicServer, limits string, env ...string) string {
	bin := testutil.ClaudeBin(t)
	env = append(append(srv.Env(), "HOME="+t.TempDir()), env...)
	return fmt.Sprintf(`agent = "claude"

[limits]
max_iterations = 6
idle_timeout = "2m"
%s

[agents.claude]
binary = %q
model = "claude-sonnet-4-5"
max_turns = 10
env = %s
`, limits, bin, tomlList(env))
}

// A whole ralph run with the real Claude Code: iteration 1 writes the
// plan, the harness validates it at the top of iteration 2 and flips to
// BUILD, iteration 2 builds, writes the summary and asks to complete, the
// gates pass. The store holds the CLI's tool calls and its cost.
func TestE2EClaudeRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	srv := testutil.NewAnthropic(t,
		// Iteration 1 (PLAN): write the plan, then end the turn.
		testutil.Calls("I will write the plan.", testutil.WriteFile(abs(".ralph/plan.tsx"), appPlan)),
		testutil.Text("I wrote the plan to .ralph/plan.tsx."),
		// Iteration 2 (BUILD): the section, the summary, the status.
		testutil.Calls("Building the hero section.",
			testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection),
			testutil.WriteFile(abs("src/App.tsx"), appEntry),
			testutil.Shell("sh", "-c", "printf 'Built the Tideline hero section.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt"),
		),
		testutil.Text("The hero section is built."),
	)
	writeConfig(t, dir, claudeConfig(t, srv, ""))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "build the Tideline landing page")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	for _, want := range []string{"plan validated (", "phase is now BUILD", "gates: has-summary pass", "completed"} {
		if !strings.Contains(res.out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.out)
		}
	}
	if got := mustRead(t, dir, "src/sections/HeroSection.tsx"); got != heroSection {
		t.Errorf("HeroSection.tsx = %q", got)
	}
	if got := mustRead(t, dir, ".ralph/plan.tsx"); got != appPlan {
		t.Errorf("plan.tsx = %q", got)
	}
	if got := strings.TrimSpace(mustRead(t, dir, ".ralph/phase.txt")); got != "build" {
		t.Errorf("phase = %q, want build", got)
	}

	if rec.task.Reason != "completed" || rec.task.Agent != "claude" {
		t.Errorf("task = %+v, want completed by claude", rec.task)
	}
	if got := rec.outcomes(); got != "1:continue,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:continue,2:completed\nevents:\n%s", got, rec.dump())
	}
	if len(rec.its) == 2 && (rec.its[0].Phase != "plan" || rec.its[1].Phase != "build") {
		t.Errorf("iteration phases = %s, %s; want plan, build", rec.its[0].Phase, rec.its[1].Phase)
	}
	// The tool calls the CLI made, with their input.
	writes := map[string]int{}
	var bash bool
	for _, e := range rec.of("tool_call") {
		switch e.Tool {
		case "Write":
			for _, p := range []string{".ralph/plan.tsx", "src/sections/HeroSection.tsx"} {
				if strings.Contains(e.Data, abs(p)) {
					writes[p] = e.Iteration
				}
			}
		case "Bash":
			bash = bash || strings.Contains(e.Data, ".ralph/status.txt")
		}
	}
	if writes[".ralph/plan.tsx"] != 1 || writes["src/sections/HeroSection.tsx"] != 2 || !bash {
		t.Errorf("tool calls: Write plan.tsx in iteration %d, HeroSection.tsx in %d, Bash status %v; want 1, 2, true\nevents:\n%s",
			writes[".ralph/plan.tsx"], writes["src/sections/HeroSection.tsx"], bash, rec.dump())
	}
	if len(rec.of("plan-validated")) != 1 {
		t.Errorf("plan-validated events = %d, want 1", len(rec.of("plan-validated")))
	}
	// The cost Claude Code reported, summed per task.
	if rec.task.CostUSD <= 0 || rec.task.InputTokens <= 0 || rec.task.OutputTokens <= 0 {
		t.Errorf("task cost %.6f, tokens %d in / %d out; want all > 0", rec.task.CostUSD, rec.task.InputTokens, rec.task.OutputTokens)
	}
	for _, it := range rec.its {
		if it.CostUSD <= 0 {
			t.Errorf("iteration %d cost = %v, want > 0", it.Number, it.CostUSD)
		}
	}
	// Every iteration was a fresh invocation: two model requests each.
	if n := len(srv.Scripted()); n != 4 || srv.Remaining() != 0 {
		t.Errorf("scripted requests = %d, turns left = %d; want 4, 0", n, srv.Remaining())
	}
}

// The provider answers 429 and Claude Code (told not to retry) gives up:
// ralph waits the limit out and retries the same iteration, which then
// completes. The limit is neither a failure nor a stall.
func TestE2EClaudeRateLimitRecovers(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	srv := testutil.NewAnthropic(t,
		testutil.Turn{Status: 429, RetryAfter: "1", Message: "Number of request tokens has exceeded your per-minute rate limit"},
		testutil.Calls("Finishing.", testutil.Shell("sh", "-c", "printf 'Wrote the summary.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt")),
		testutil.Text("Done."),
	)
	// max_wait caps the wait so the test does not sit out the default backoff.
	writeConfig(t, dir, claudeConfig(t, srv, `max_wait = "1s"`, "CLAUDE_CODE_MAX_RETRIES=0"))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "write a summary")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	if !strings.Contains(res.out, "rate limited") {
		t.Errorf("output does not show the wait:\n%s", res.out)
	}
	if got := rec.outcomes(); got != "1:completed" {
		t.Errorf("iteration outcomes = %s, want 1:completed (the limited iteration retried)\nevents:\n%s", got, rec.dump())
	}
	var waited bool
	for _, e := range rec.of("rate-limit") {
		waited = waited || e.Source == "harness" && e.Iteration == 1 && strings.Contains(e.Text, "retrying iteration 1")
	}
	if !waited || len(rec.of("rate_limit")) != 1 {
		t.Errorf("want one rate_limit agent event and a harness rate-limit wait in iteration 1\nevents:\n%s", rec.dump())
	}
	if n := len(rec.of("agent-error")) + len(rec.of("stall")); n != 0 {
		t.Errorf("the rate limit counted as %d failures or stalls\nevents:\n%s", n, rec.dump())
	}
	if rec.task.Reason != "completed" {
		t.Errorf("task reason = %q, want completed", rec.task.Reason)
	}
	if n := len(srv.Scripted()); n != 3 {
		t.Errorf("scripted requests = %d, want 3 (one limited, two working)", n)
	}
}

// An agent binary that starts a child and hangs, printing nothing, and
// ignores SIGTERM: the idle timeout kills its whole process group (the
// child too) and the run ends with a clear reason.
func TestE2EHangingAgentKilled(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	// The agent, confined, may write the pid file's directory because
	// [sandbox] write says so.
	pidDir := t.TempDir()
	pids := filepath.Join(pidDir, "pids")
	fake := testutil.FakeBin(t, "claude", `trap '' TERM
sleep 300 &
echo "$$ $!" > "`+pids+`"
wait
`)
	writeConfig(t, dir, fmt.Sprintf("[agents.claude]\nbinary = %q\n[sandbox]\nwrite = [%q]\n", fake, pidDir)+templateParser)
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, time.Minute, "run", "--agent", "claude", "--idle-timeout", "1s", "--max-iterations", "1", "do something")
	t.Logf("output:\n%s", res.out)
	if res.code != 3 {
		t.Errorf("exit %d, want 3 (max-iterations)\n%s", res.code, res.out)
	}
	for _, want := range []string{"the agent printed nothing for 1s and was stopped", "max-iterations"} {
		if !strings.Contains(res.out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.out)
		}
	}
	rec := readRun(t, dir)
	if got := rec.outcomes(); got != "1:idle" {
		t.Errorf("iteration outcomes = %s, want 1:idle", got)
	}
	if rec.task.Reason != "max-iterations" || rec.task.Detail == "" {
		t.Errorf("task ended %q: %q", rec.task.Reason, rec.task.Detail)
	}
	var shell, child int
	if _, err := fmt.Sscan(mustRead(t, pids, ""), &shell, &child); err != nil {
		t.Fatalf("pids the fake recorded: %v", err)
	}
	for _, pid := range []int{shell, child} {
		if alive(pid) {
			t.Errorf("process %d of the agent's group is still running", pid)
		}
	}
}

// alive reports whether the process pid runs (a zombie waiting to be
// reaped has ended and does not count), waiting a moment for it to go.
func alive(pid int) bool {
	deadline := time.Now().Add(3 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			if !proc.Alive(pid) {
				return false
			}
		} else if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
}
