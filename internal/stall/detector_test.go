package stall

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func write(path, content string) Call {
	in, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return Call{Name: "write", Input: in}
}

func shell(argv ...string) Call {
	in, _ := json.Marshal(map[string][]string{"argv": argv})
	return Call{Name: "shell", Input: in}
}

// step is one iteration in a detector scenario, with the verdict expected.
type step struct {
	obs  Observation
	want Kind
}

func TestDetector(t *testing.T) {
	same := []Call{write("src/a.ts", "x"), shell("npm", "test"), write("src/b.ts", "y"), shell("npm", "run", "build")}

	tests := []struct {
		name  string
		cfg   Config
		steps func() []step
	}{
		{
			name: "repeat fires at iteration 3 with threshold 3",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: same, TreeHash: "t1"}, None},
					{Observation{Iteration: 2, Calls: same, TreeHash: "t1"}, None},
					{Observation{Iteration: 3, Calls: same, TreeHash: "t1"}, Repeat},
					{Observation{Iteration: 4, Calls: same, TreeHash: "t1"}, Repeat},
				}
			},
		},
		{
			name: "progress every iteration for 15 iterations never fires",
			cfg:  DefaultConfig(),
			steps: func() []step {
				var s []step
				for i := 1; i <= 15; i++ {
					s = append(s, step{Observation{
						Iteration: i,
						Calls:     []Call{write(fmt.Sprintf("src/f%d.ts", i), "code"), shell("npm", "test")},
						TreeHash:  fmt.Sprintf("tree-%d", i),
						// A test that keeps failing the same way while the agent builds
						// the feature is progress, not a repeated error.
						Errors: []string{"FAIL\tsrc/app.test.ts (0.42s)\n  expected 10 items, got 8"},
					}, None})
				}
				return s
			},
		},
		{
			name: "same failing test command with changing code is not a repeat",
			cfg:  DefaultConfig(),
			steps: func() []step {
				var s []step
				for i := 1; i <= 6; i++ {
					s = append(s, step{Observation{
						Iteration: i,
						Calls:     []Call{write("src/sum.ts", fmt.Sprintf("attempt %d", i)), shell("go", "test", "./...")},
						TreeHash:  fmt.Sprintf("tree-%d", i),
						Errors:    []string{fmt.Sprintf("--- FAIL: TestSum (0.0%ds)\n    sum_test.go:12: got 3, want 4", i)},
					}, None})
				}
				return s
			},
		},
		{
			name: "rate-limited iterations neither count nor reset",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: same, TreeHash: "t"}, None},
					{Observation{Iteration: 2, RateLimited: true, Errors: []string{"429 rate limited"}}, None},
					{Observation{Iteration: 3, Calls: same, TreeHash: "t"}, None},
					{Observation{Iteration: 4, RateLimited: true, Calls: []Call{shell("ls")}, TreeHash: "other"}, None},
					{Observation{Iteration: 5, Calls: same, TreeHash: "t"}, Repeat},
				}
			},
		},
		{
			name: "an iteration without calls breaks a repeat and never counts",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: same, TreeHash: "a"}, None},
					{Observation{Iteration: 2, Calls: same, TreeHash: "b"}, None},
					{Observation{Iteration: 3, TreeHash: "c"}, None},
					{Observation{Iteration: 4, TreeHash: "d"}, None},
					{Observation{Iteration: 5, TreeHash: "e"}, None},
					{Observation{Iteration: 6, Calls: same, TreeHash: "f"}, None},
				}
			},
		},
		{
			name: "no progress fires after K unchanged iterations with calls",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: []Call{shell("ls")}, TreeHash: "t0"}, None}, // sets the baseline
					{Observation{Iteration: 2, Calls: []Call{shell("cat", "a.ts")}, TreeHash: "t0"}, None},
					{Observation{Iteration: 3, TreeHash: "t0"}, None}, // no calls: neither counts nor resets
					{Observation{Iteration: 4, Calls: []Call{shell("cat", "b.ts")}, TreeHash: "t0"}, None},
					{Observation{Iteration: 5, Calls: []Call{shell("grep", "x")}, TreeHash: "t0"}, NoProgress},
					{Observation{Iteration: 6, Calls: []Call{write("a.ts", "y")}, TreeHash: "t1"}, None},
				}
			},
		},
		{
			name: "an unknown tree hash neither counts nor resets no-progress",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: []Call{shell("ls")}, TreeHash: "t0"}, None},
					{Observation{Iteration: 2, Calls: []Call{shell("a")}, TreeHash: "t0"}, None},
					{Observation{Iteration: 3, Calls: []Call{shell("b")}}, None},
					{Observation{Iteration: 4, Calls: []Call{shell("c")}, TreeHash: "t0"}, None},
					{Observation{Iteration: 5, Calls: []Call{shell("d")}, TreeHash: "t0"}, NoProgress},
				}
			},
		},
		{
			name: "repeated error fires when nothing changes",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: []Call{shell("npm", "test")}, TreeHash: "t", Errors: []string{"2025-01-02T10:00:01Z error: build failed after 1.2s"}}, None},
					{Observation{Iteration: 2, Errors: []string{"2025-01-02T10:05:07Z error:  build failed after 0.8s"}}, None},
					{Observation{Iteration: 3, Errors: []string{"2025-01-02T10:09:33Z error: build failed\nafter 2s"}}, RepeatedError},
				}
			},
		},
		{
			name: "different errors do not repeat",
			cfg:  DefaultConfig(),
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Errors: []string{"src/a.ts:3: missing ;"}}, None},
					{Observation{Iteration: 2, Errors: []string{"src/a.ts:7: missing ;"}}, None},
					{Observation{Iteration: 3, Errors: []string{"src/a.ts:3: missing ;"}}, None},
					{Observation{Iteration: 4}, None},
					{Observation{Iteration: 5, Errors: []string{"src/a.ts:3: missing ;"}}, None},
				}
			},
		},
		{
			name: "negative threshold turns a detector off",
			cfg:  Config{RepeatThreshold: -1},
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: same, TreeHash: "a"}, None},
					{Observation{Iteration: 2, Calls: same, TreeHash: "b"}, None},
					{Observation{Iteration: 3, Calls: same, TreeHash: "c"}, None},
					{Observation{Iteration: 4, Calls: same, TreeHash: "d"}, None},
				}
			},
		},
		{
			name: "repeat wins over no-progress",
			cfg:  Config{RepeatThreshold: 2, NoProgressThreshold: 1},
			steps: func() []step {
				return []step{
					{Observation{Iteration: 1, Calls: same, TreeHash: "t"}, None},
					{Observation{Iteration: 2, Calls: []Call{shell("ls")}, TreeHash: "t"}, NoProgress},
					{Observation{Iteration: 3, Calls: []Call{shell("ls")}, TreeHash: "t"}, Repeat},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDetector(tt.cfg)
			for _, s := range tt.steps() {
				v := d.Observe(s.obs)
				if v.Kind != s.want {
					t.Fatalf("iteration %d: verdict %v (%q), want %v", s.obs.Iteration, v.Kind, v.Reason, s.want)
				}
				if v.Kind == None && v.Reason != "" {
					t.Errorf("iteration %d: healthy verdict has reason %q", s.obs.Iteration, v.Reason)
				}
				if v.Kind != None && (v.Reason == "" || strings.Contains(v.Reason, "\n") || v.Iteration != s.obs.Iteration) {
					t.Errorf("iteration %d: verdict %+v needs a one-line reason and the iteration", s.obs.Iteration, v)
				}
			}
		})
		// A run that goes on in a new process after every iteration
		// (ralph run --yield-after 1) gets the same verdicts from a
		// detector restored from the last one's State.
		t.Run(tt.name+"/restored after every iteration", func(t *testing.T) {
			var saved []byte
			for _, s := range tt.steps() {
				d := NewDetector(tt.cfg)
				if saved != nil {
					var st State
					if err := json.Unmarshal(saved, &st); err != nil {
						t.Fatal(err)
					}
					d.Restore(st)
				}
				v := d.Observe(s.obs)
				if v.Kind != s.want {
					t.Fatalf("iteration %d: verdict %v (%q), want %v", s.obs.Iteration, v.Kind, v.Reason, s.want)
				}
				var err error
				if saved, err = json.Marshal(d.State()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Restore brings back the recoveries and recent calls too: a stall after
// a restored recovery is the second.
func TestDetectorStateKeepsRecoveries(t *testing.T) {
	d := NewDetector(DefaultConfig())
	d.Observe(Observation{Iteration: 1, Calls: []Call{shell("ls")}, TreeHash: "t"})
	d.NoteRecovery()
	r := NewDetector(DefaultConfig())
	r.Restore(d.State())
	if r.Recoveries() != 1 || len(r.RecentCalls()) != 1 || r.RecentCalls()[0].Name != "shell" {
		t.Errorf("restored: %d recoveries, recent calls %+v", r.Recoveries(), r.RecentCalls())
	}
}

func TestDetectorVerdictDetails(t *testing.T) {
	d := NewDetector(DefaultConfig())
	calls := []Call{write("src/a.ts", "x"), shell("npm", "test"), write("src/b.ts", "y"), shell("npm", "run", "build")}
	var v Verdict
	for i := 7; i <= 9; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: calls, TreeHash: "t"})
	}
	if v.Kind != Repeat || v.Count != 3 {
		t.Fatalf("verdict = %v count %d, want repeat count 3", v.Kind, v.Count)
	}
	if want := "the same 4 tool calls 3 iterations in a row"; v.Reason != want {
		t.Errorf("reason = %q, want %q", v.Reason, want)
	}
	if got := fmt.Sprint(v.Evidence.Iterations); got != "[7 8 9]" {
		t.Errorf("evidence iterations = %s, want [7 8 9]", got)
	}
	if v.Evidence.Signature != Signature(calls) || len(v.Evidence.Calls) != 4 {
		t.Errorf("evidence = %+v, want the signature and the 4 calls", v.Evidence)
	}

	d = NewDetector(DefaultConfig())
	for i := 1; i <= 3; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: []Call{shell("npm", "test")}})
	}
	if want := "the same tool call (shell npm test) 3 iterations in a row"; v.Reason != want {
		t.Errorf("reason = %q, want %q", v.Reason, want)
	}
}

func TestDetectorReset(t *testing.T) {
	d := NewDetector(DefaultConfig())
	calls := []Call{shell("npm", "test")}
	obs := func(i int) Verdict {
		return d.Observe(Observation{Iteration: i, Calls: calls, TreeHash: "t", Errors: []string{"boom"}})
	}
	d.SetBaseline("t")
	for i := 1; i <= 2; i++ {
		if v := obs(i); v.Kind != None {
			t.Fatalf("iteration %d: %v before threshold", i, v.Kind)
		}
	}
	if v := obs(3); v.Kind != Repeat {
		t.Fatalf("iteration 3: %v, want repeat", v.Kind)
	}
	if n := d.NoteRecovery(); n != 1 {
		t.Errorf("NoteRecovery() = %d, want 1", n)
	}
	d.Reset()
	for i := 4; i <= 5; i++ {
		if v := obs(i); v.Kind != None {
			t.Fatalf("iteration %d after Reset: %v (%s), want none", i, v.Kind, v.Reason)
		}
	}
	if v := obs(6); v.Kind != Repeat {
		t.Fatalf("iteration 6: %v, want repeat again", v.Kind)
	}
	if n := d.NoteRecovery(); n != 2 || d.Recoveries() != 2 {
		t.Errorf("recoveries = %d/%d, want 2: Reset must keep the recovery count", n, d.Recoveries())
	}
}

func TestDetectorBaseline(t *testing.T) {
	d := NewDetector(DefaultConfig())
	d.SetBaseline("t0")
	var v Verdict
	for i := 1; i <= 3; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: []Call{shell("cat", fmt.Sprint(i))}, TreeHash: "t0"})
	}
	if v.Kind != NoProgress || v.Count != 3 || v.Evidence.TreeHash != "t0" {
		t.Fatalf("verdict %+v, want no-progress after 3 iterations from a baseline", v)
	}
}

func TestDetectorRecentCalls(t *testing.T) {
	d := NewDetector(DefaultConfig())
	d.Observe(Observation{Iteration: 1, Calls: []Call{shell("a"), shell("b")}})
	d.Observe(Observation{Iteration: 2, RateLimited: true, Calls: []Call{shell("ignored")}})
	d.Observe(Observation{Iteration: 3, Calls: []Call{shell("c"), shell("d")}})
	var got []string
	for _, c := range d.RecentCalls() {
		got = append(got, summarize(c))
	}
	if want := "shell b|shell c|shell d"; strings.Join(got, "|") != want {
		t.Errorf("RecentCalls = %q, want %q", got, want)
	}
}

func TestNormalizeError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ok  \tpkg\t0.123s", "ok pkg <dur>"},
		{"--- FAIL: TestX (0.00s)", "--- FAIL: TestX (<dur>)"},
		{"took 1m2.5s and 12ms", "took <dur> and <dur>"},
		{"2025-01-02T15:04:05.123Z boom", "<time> boom"},
		{"[15:04:05] boom", "[<time>] boom"},
		{"panic at 0xc000123456", "panic at <addr>"},
		{"src/a.ts:12:3 error TS2322", "src/a.ts:12:3 error TS2322"},
		{"  \n\t ", ""},
	}
	for _, tt := range tests {
		if got := NormalizeError(tt.in); got != tt.want {
			t.Errorf("NormalizeError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{None: "none", Repeat: "repeat", NoProgress: "no-progress", RepeatedError: "repeated-error", Kind(9): "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

// An idle iteration — one that asked to finish where nothing could
// change — keeps the repeated-error chain going even though it touched
// the tree.
func TestIdleIterationsKeepTheErrorChain(t *testing.T) {
	d := NewDetector(Config{RepeatedErrorThreshold: 3})
	d.SetBaseline("t0")
	var v Verdict
	for i := 1; i <= 3; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: []Call{{Name: "write", Input: []byte(`{"n":` + string(rune('0'+i)) + `}`)}},
			TreeHash: "t" + string(rune('0'+i)), Errors: []string{"asked to finish with the previous task's plan unchanged"}, Idle: true})
	}
	if v.Kind != RepeatedError || v.Count != 3 {
		t.Fatalf("verdict = %+v, want a repeated error over 3 iterations", v)
	}
	d = NewDetector(Config{RepeatedErrorThreshold: 3})
	d.SetBaseline("t0")
	for i := 1; i <= 3; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: []Call{{Name: "write", Input: []byte(`{"n":` + string(rune('0'+i)) + `}`)}},
			TreeHash: "t" + string(rune('0'+i)), Errors: []string{"a test keeps failing"}})
	}
	if v.Stalled() {
		t.Fatalf("an agent changing files while a test fails stalled: %+v", v)
	}
}
