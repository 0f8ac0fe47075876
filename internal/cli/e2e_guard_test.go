package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// The real Claude Code, told by its model to skip the PLAN phase, writes
// .ralph/phase.txt with its Write tool: the harness undoes the write before
// anything reads it and says so, the next iteration's prompt says PLAN and
// tells the model why, and the plan phase still runs before BUILD.
func TestE2EClaudePhaseWriteUndone(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	srv := testutil.NewAnthropic(t,
		// Iteration 1 (PLAN): the cheat (Claude Code writes a file it
		// has read).
		testutil.Calls("Planning is a waste of time.", testutil.RawCall("Read", map[string]any{"file_path": abs(".ralph/phase.txt")})),
		testutil.Calls("Switching to build.", testutil.WriteFile(abs(".ralph/phase.txt"), "build")),
		testutil.Text("I set the phase to build."),
		// Iteration 2 (still PLAN): the plan.
		testutil.Calls("I will write the plan.", testutil.WriteFile(abs(".ralph/plan.tsx"), appPlan)),
		testutil.Text("I wrote the plan."),
		// Iteration 3 (BUILD, opened by the harness).
		testutil.Calls("Building.",
			testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection),
			testutil.WriteFile(abs("src/App.tsx"), appEntry),
			testutil.Shell("sh", "-c", "printf 'Built the hero.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt"),
		),
		testutil.Text("Built."),
	)
	writeConfig(t, dir, claudeConfig(t, srv, ""))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "build the Tideline landing page")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	if want := "[1 plan] warning: the agent wrote .ralph/phase.txt; the harness decides the phase (undone)"; !strings.Contains(res.out, want) {
		t.Errorf("output lacks %q:\n%s", want, res.out)
	}
	var phases []string
	for _, it := range rec.its {
		phases = append(phases, it.Phase)
	}
	if got := strings.Join(phases, ","); got != "plan,plan,build" {
		t.Errorf("iteration phases = %s, want plan,plan,build (the plan phase ran)\nevents:\n%s", got, rec.dump())
	}
	tampers := rec.of("tamper")
	if len(tampers) != 1 || tampers[0].Iteration != 1 || !strings.Contains(tampers[0].Data, `".ralph/phase.txt"`) {
		t.Errorf("tamper events = %+v, want one for .ralph/phase.txt in iteration 1", tampers)
	}
	if len(rec.of("plan-validated")) != 1 {
		t.Errorf("plan-validated events = %d, want 1", len(rec.of("plan-validated")))
	}
	// The second iteration's prompt: PLAN, and why.
	reqs := srv.Scripted()
	if len(reqs) < 4 {
		t.Fatalf("scripted requests = %d, want at least 4", len(reqs))
	}
	second := reqs[3].UserText
	for _, want := range []string{"Iteration 2 — phase plan", "The harness undid your change to .ralph/phase.txt"} {
		if !strings.Contains(second, want) {
			t.Errorf("iteration 2's prompt lacks %q:\n%s", want, second)
		}
	}
	if !strings.Contains(rec.task.Detail, "tampered with what is not its own 1 time (.ralph/phase.txt)") {
		t.Errorf("the task's end does not name the tamper: %q", rec.task.Detail)
	}
}
