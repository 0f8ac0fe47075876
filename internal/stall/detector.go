package stall

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/config"
)

// Kind names the detector behind a verdict.
type Kind int

// The kinds of stall a Detector reports.
const (
	// None means the run looks healthy.
	None Kind = iota
	// Repeat means the agent made the same tool calls several iterations in
	// a row.
	Repeat
	// NoProgress means the workspace did not change across several
	// iterations in which the agent made tool calls.
	NoProgress
	// RepeatedError means the same error ended several iterations in a row
	// without the workspace changing.
	RepeatedError
)

// String returns the kind's lower-case name, as logged and stored.
func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Repeat:
		return "repeat"
	case NoProgress:
		return "no-progress"
	case RepeatedError:
		return "repeated-error"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Config sets how many consecutive iterations each detector needs before it
// fires. Zero means the default (3); a negative value turns the detector off.
type Config struct {
	RepeatThreshold        int
	NoProgressThreshold    int
	RepeatedErrorThreshold int
}

// ConfigFrom returns the thresholds ralph.toml's [stall] sets.
func ConfigFrom(s config.Stall) Config {
	return Config{RepeatThreshold: s.Repeat, NoProgressThreshold: s.NoProgress, RepeatedErrorThreshold: s.RepeatedErrors}
}

// defaultThreshold is the number of iterations every detector needs unless
// configured otherwise (seed 002 §8: STALL_THRESHOLD = 3).
const defaultThreshold = 3

// DefaultConfig returns the configuration ralph uses unless told otherwise:
// every threshold at 3.
func DefaultConfig() Config {
	return Config{
		RepeatThreshold:        defaultThreshold,
		NoProgressThreshold:    defaultThreshold,
		RepeatedErrorThreshold: defaultThreshold,
	}
}

// Observation is what the engine saw in one iteration.
type Observation struct {
	// Iteration is the iteration's number, used only in evidence.
	Iteration int
	// Calls are the iteration's tool calls in the order the agent made them.
	Calls []Call
	// TreeHash is the workspace content hash after the iteration (see
	// TreeHash); empty when unknown, in which case the no-progress detector
	// skips the iteration.
	TreeHash string
	// Errors are the iteration's gate failure messages and agent error text.
	Errors []string
	// RateLimited marks an iteration cut short by a rate limit; the Detector
	// ignores it entirely.
	RateLimited bool
	// Idle marks an iteration that made no progress whatever the tree
	// says: it asked to finish where nothing could change until it does
	// what the harness asked (the previous task's plan left unchanged).
	// Its change of the tree does not break the repeated-error chain.
	Idle bool
}

// Verdict is a Detector's judgement of the run after one observation.
type Verdict struct {
	Kind Kind
	// Count is the number of consecutive iterations behind the verdict.
	Count int
	// Iteration is the iteration that triggered the verdict.
	Iteration int
	// Reason is one line a user can read, such as "the same 4 tool calls
	// 3 iterations in a row". Empty when Kind is None.
	Reason   string
	Evidence Evidence
}

// Stalled reports whether the verdict is a stall.
func (v Verdict) Stalled() bool { return v.Kind != None }

// Evidence holds what a verdict rests on, for logs, events and guidance.
type Evidence struct {
	// Iterations are the iterations counted, oldest first.
	Iterations []int
	// Signature is the repeated call signature (Repeat).
	Signature string
	// Calls are the repeated calls (Repeat) or the latest iteration's calls
	// (NoProgress).
	Calls []Call
	// TreeHash is the unchanged workspace hash (NoProgress).
	TreeHash string
	// Error is the repeated error, normalised (RepeatedError).
	Error string
}

// recentCallsKept is how many recent calls a Detector remembers for
// recovery guidance.
const recentCallsKept = 3

// A Detector watches one task's iterations for stalls. Feed it every
// iteration with Observe; after a recovery call NoteRecovery and Reset. Use
// a new Detector for each task. A Detector is not safe for concurrent use.
//
// Three detectors run side by side:
//
//   - repeat: identical non-empty call signatures in consecutive iterations.
//     It looks only at the calls, never at the tree, so re-running the same
//     failing test while writing different code is not a repeat: the writes
//     are part of the signature. An iteration without calls breaks the chain.
//   - no-progress: the tree hash unchanged across consecutive iterations that
//     made tool calls. A changed tree resets it; an iteration without calls
//     and an unchanged tree neither counts nor resets.
//   - repeated error: the same normalised error text (see NormalizeError)
//     ending consecutive iterations. An iteration without errors, or one that
//     changed the tree, breaks the chain: an agent changing files while a
//     test keeps failing is working, not stalled.
//
// So a run that changes the workspace every iteration only ever trips the
// repeat detector, and only by making byte-for-byte the same calls. A
// rate-limited iteration is ignored by all three.
type Detector struct {
	cfg Config

	lastSig   string
	sigIters  []int
	lastTree  string
	treeIters []int
	lastErr   string
	errIters  []int

	recent     []Call
	recoveries int
}

// NewDetector returns a Detector with cfg's thresholds.
func NewDetector(cfg Config) *Detector {
	return &Detector{cfg: Config{
		RepeatThreshold:        threshold(cfg.RepeatThreshold),
		NoProgressThreshold:    threshold(cfg.NoProgressThreshold),
		RepeatedErrorThreshold: threshold(cfg.RepeatedErrorThreshold),
	}}
}

func threshold(n int) int {
	if n == 0 {
		return defaultThreshold
	}
	return n
}

// SetBaseline records the workspace hash outside an iteration: at the start
// of the task, or after the engine itself changed the tree (a rollback).
// Without a baseline the first observed iteration only sets one.
func (d *Detector) SetBaseline(treeHash string) {
	d.lastTree = treeHash
	d.treeIters = nil
}

// Observe records one iteration and returns the verdict on the run so far.
// A detector that has fired keeps firing, its count growing, until Reset.
// When several fire at once the verdict is, in order of preference, Repeat,
// RepeatedError, NoProgress.
func (d *Detector) Observe(o Observation) Verdict {
	if o.RateLimited {
		return Verdict{Iteration: o.Iteration}
	}
	d.remember(o.Calls)

	treeChanged := false
	if o.TreeHash != "" {
		switch {
		case d.lastTree == "":
			d.lastTree = o.TreeHash
		case o.TreeHash != d.lastTree:
			treeChanged = true
			d.lastTree = o.TreeHash
			d.treeIters = nil
		case len(o.Calls) > 0:
			d.treeIters = append(d.treeIters, o.Iteration)
		}
	}

	sig := Signature(o.Calls)
	switch {
	case sig == "":
		d.sigIters = nil
	case sig == d.lastSig:
		d.sigIters = append(d.sigIters, o.Iteration)
	default:
		d.sigIters = []int{o.Iteration}
	}
	d.lastSig = sig

	errText := joinErrors(o.Errors)
	switch {
	case errText == "" || treeChanged && !o.Idle:
		d.errIters = nil
	case errText == d.lastErr:
		d.errIters = append(d.errIters, o.Iteration)
	default:
		d.errIters = []int{o.Iteration}
	}
	d.lastErr = errText

	if fires(d.cfg.RepeatThreshold, d.sigIters) {
		n := len(d.sigIters)
		return Verdict{
			Kind:      Repeat,
			Count:     n,
			Iteration: o.Iteration,
			Reason:    fmt.Sprintf("%s %d iterations in a row", sameCalls(o.Calls), n),
			Evidence: Evidence{
				Iterations: slices.Clone(d.sigIters),
				Signature:  sig,
				Calls:      slices.Clone(o.Calls),
			},
		}
	}
	if fires(d.cfg.RepeatedErrorThreshold, d.errIters) {
		n := len(d.errIters)
		return Verdict{
			Kind:      RepeatedError,
			Count:     n,
			Iteration: o.Iteration,
			Reason:    fmt.Sprintf("the same error %d iterations in a row: %s", n, firstLine(errText, 80)),
			Evidence: Evidence{
				Iterations: slices.Clone(d.errIters),
				Error:      errText,
			},
		}
	}
	if fires(d.cfg.NoProgressThreshold, d.treeIters) {
		n := len(d.treeIters)
		return Verdict{
			Kind:      NoProgress,
			Count:     n,
			Iteration: o.Iteration,
			Reason:    fmt.Sprintf("no file changed in %d iterations of tool calls", n),
			Evidence: Evidence{
				Iterations: slices.Clone(d.treeIters),
				Calls:      slices.Clone(o.Calls),
				TreeHash:   d.lastTree,
			},
		}
	}
	return Verdict{Iteration: o.Iteration}
}

func fires(threshold int, iters []int) bool {
	return threshold > 0 && len(iters) >= threshold
}

// remember keeps the last few calls for RecentCalls.
func (d *Detector) remember(calls []Call) {
	d.recent = append(d.recent, calls...)
	if n := len(d.recent); n > recentCallsKept {
		d.recent = slices.Clone(d.recent[n-recentCallsKept:])
	}
}

// RecentCalls returns up to the last three tool calls observed, oldest
// first, across iteration boundaries: the "last actions" recovery guidance
// quotes.
func (d *Detector) RecentCalls() []Call {
	return slices.Clone(d.recent)
}

// Reset clears every detector's count, as the engine does after a recovery.
// It keeps the recovery count, the recent calls and the last tree hash (the
// workspace is what it is; only the counting starts over).
func (d *Detector) Reset() {
	d.lastSig, d.sigIters = "", nil
	d.treeIters = nil
	d.lastErr, d.errIters = "", nil
}

// NoteRecovery records that the engine recovered from a stall and returns
// how many recoveries this task has had, this one included. The second one
// ends the task (see FailureMessage).
func (d *Detector) NoteRecovery() int {
	d.recoveries++
	return d.recoveries
}

// Recoveries returns how many recoveries this task has had.
func (d *Detector) Recoveries() int { return d.recoveries }

func sameCalls(calls []Call) string {
	if len(calls) == 1 {
		return fmt.Sprintf("the same tool call (%s)", summarize(calls[0]))
	}
	return fmt.Sprintf("the same %d tool calls", len(calls))
}

var (
	// durationRE matches Go- and test-runner-style durations: 0.123s,
	// 12ms, 1m2.5s, 3µs, (0.00s).
	durationRE = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|ns)(?:\d+(?:\.\d+)?(?:m|s|ms|us|µs|ns))*\b`)
	// timestampRE matches RFC 3339 / ISO 8601 date-times and bare clock
	// times: 2025-01-02T15:04:05.123Z, 2025-01-02 15:04:05, 15:04:05.
	timestampRE = regexp.MustCompile(`(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	// addressRE matches hexadecimal pointers such as 0xc000123456.
	addressRE = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`)
)

// NormalizeError reduces error text to what stays the same when the same
// failure happens again: timestamps become <time>, durations <dur>, hex
// addresses <addr>, and every run of white space one space. Nothing else is
// touched: line numbers, paths and counts stay, since a changed one usually
// means a different failure.
func NormalizeError(s string) string {
	s = timestampRE.ReplaceAllString(s, "<time>")
	s = durationRE.ReplaceAllString(s, "<dur>")
	s = addressRE.ReplaceAllString(s, "<addr>")
	return strings.Join(strings.Fields(s), " ")
}

// joinErrors normalises an iteration's errors and joins them, sorted, so
// the order gates report in does not matter.
func joinErrors(errs []string) string {
	var norm []string
	for _, e := range errs {
		if n := NormalizeError(e); n != "" {
			norm = append(norm, n)
		}
	}
	slices.Sort(norm)
	return strings.Join(norm, "\n")
}

// firstLine returns s's first line cut to at most max runes.
func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncate(s, max)
}

func truncate(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

// State is a Detector's counts, for a run that goes on in another process:
// a task run one iteration per process (ralph run --yield-after) saves it
// when a process yields and restores it in the next, so the counting goes
// on where it was. It marshals to JSON.
type State struct {
	LastSig    string `json:"last_sig,omitempty"`
	SigIters   []int  `json:"sig_iters,omitempty"`
	LastTree   string `json:"last_tree,omitempty"`
	TreeIters  []int  `json:"tree_iters,omitempty"`
	LastErr    string `json:"last_err,omitempty"`
	ErrIters   []int  `json:"err_iters,omitempty"`
	Recent     []Call `json:"recent,omitempty"`
	Recoveries int    `json:"recoveries,omitempty"`
}

// State returns the detector's counts.
func (d *Detector) State() State {
	return State{
		LastSig: d.lastSig, SigIters: slices.Clone(d.sigIters),
		LastTree: d.lastTree, TreeIters: slices.Clone(d.treeIters),
		LastErr: d.lastErr, ErrIters: slices.Clone(d.errIters),
		Recent: slices.Clone(d.recent), Recoveries: d.recoveries,
	}
}

// Restore sets the detector's counts to s, as State returned them; the
// thresholds stay the detector's own.
func (d *Detector) Restore(s State) {
	d.lastSig, d.sigIters = s.LastSig, slices.Clone(s.SigIters)
	d.lastTree, d.treeIters = s.LastTree, slices.Clone(s.TreeIters)
	d.lastErr, d.errIters = s.LastErr, slices.Clone(s.ErrIters)
	d.recent, d.recoveries = slices.Clone(s.Recent), s.Recoveries
}
