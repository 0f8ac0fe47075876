package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// PlanStatus is a plan's status in its .json file.
type PlanStatus string

// Plan statuses.
const (
	PlanActive      PlanStatus = "active"
	PlanInvalidated PlanStatus = "invalidated"
)

// PlanInfo is plans/<id>.json. An active plan keeps the invalidation
// time and reason of the plan it replaced, so the file tells why it was
// re-planned.
type PlanInfo struct {
	SpecRel            string     `json:"spec_rel"`
	SpecID             string     `json:"spec_id"`
	Status             PlanStatus `json:"status"`
	CreatedAtUTC       string     `json:"created_at_utc"`
	InvalidatedAtUTC   *string    `json:"invalidated_at_utc"`
	InvalidationReason *string    `json:"invalidation_reason"`
	// Attempt is the planner attempt that wrote the plan (1 for a plan a
	// person wrote).
	Attempt int `json:"attempt"`
}

// Reason returns the invalidation reason, "" when there is none.
func (p *PlanInfo) Reason() string {
	if p == nil || p.InvalidationReason == nil {
		return ""
	}
	return *p.InvalidationReason
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return workspace.WriteFile(path, append(data, '\n'))
}

// LoadPlanInfo reads plans/<id>.json; nil when there is none.
func (l Layout) LoadPlanInfo(s Spec) (*PlanInfo, error) {
	var info PlanInfo
	ok, err := readJSON(l.PlanMetaPath(s), &info)
	if err != nil {
		return nil, fmt.Errorf("load plan info: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &info, nil
}

// SavePlanInfo writes plans/<id>.json.
func (l Layout) SavePlanInfo(s Spec, info PlanInfo) error {
	info.SpecRel, info.SpecID = s.Rel, s.ID
	if err := writeJSON(l.PlanMetaPath(s), info); err != nil {
		return fmt.Errorf("save plan info: %w", err)
	}
	return nil
}

// LoadPlanContent reads plans/<id>.md; ok is false when it is missing.
func (l Layout) LoadPlanContent(s Spec) (content string, ok bool, err error) {
	data, err := os.ReadFile(l.PlanPath(s))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("load plan: %w", err)
	}
	return string(data), true, nil
}

// InvalidatePlan marks the plan invalidated with reason and archives
// plans/<id>.md as plans/<id>.attempt-N.md, N the plan's attempt. The
// json is written first: a crash in between leaves an invalidated json
// next to the plan, which the next run archives (see Position).
func (l Layout) InvalidatePlan(s Spec, reason string, now time.Time) (PlanInfo, error) {
	info, err := l.LoadPlanInfo(s)
	if err != nil {
		return PlanInfo{}, err
	}
	if info == nil {
		info = &PlanInfo{Attempt: 1, CreatedAtUTC: stamp(now)}
	}
	if info.Attempt < 1 {
		info.Attempt = 1
	}
	at := stamp(now)
	info.Status, info.InvalidatedAtUTC, info.InvalidationReason = PlanInvalidated, &at, &reason
	if err := l.SavePlanInfo(s, *info); err != nil {
		return PlanInfo{}, fmt.Errorf("invalidate plan: %w", err)
	}
	if err := l.archivePlan(s, info.Attempt); err != nil {
		return PlanInfo{}, fmt.Errorf("invalidate plan: %w", err)
	}
	return *info, nil
}

// archivePlan renames plans/<id>.md to plans/<id>.attempt-N.md, unless
// there is no plan or the archive exists already.
func (l Layout) archivePlan(s Spec, n int) error {
	src, dst := l.PlanPath(s), l.ArchivedPlanPath(s, n)
	if ok, err := workspace.Exists(src); err != nil || !ok {
		return err
	}
	if ok, err := workspace.Exists(dst); err != nil || ok {
		return err
	}
	return os.Rename(src, dst)
}

// Candidate is candidates/<id>.json: an implementation that passed its
// gates and awaits verification.
type Candidate struct {
	SpecRel string `json:"spec_rel"`
	SpecID  string `json:"spec_id"`
	// Commit is HEAD after the implementation; BaseCommit is HEAD before
	// the spec's first implementation attempt. The verifier reads the
	// diff between them.
	Commit       string `json:"commit"`
	BaseCommit   string `json:"base_commit"`
	PlanAttempt  int    `json:"plan_attempt"`
	ImplAttempt  int    `json:"impl_attempt"`
	CreatedAtUTC string `json:"created_at_utc"`
}

// LoadCandidate reads candidates/<id>.json; nil when there is none.
func (l Layout) LoadCandidate(s Spec) (*Candidate, error) {
	var c Candidate
	ok, err := readJSON(l.CandidatePath(s), &c)
	if err != nil {
		return nil, fmt.Errorf("load candidate: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// SaveCandidate writes candidates/<id>.json.
func (l Layout) SaveCandidate(s Spec, c Candidate) error {
	c.SpecRel, c.SpecID = s.Rel, s.ID
	if err := writeJSON(l.CandidatePath(s), c); err != nil {
		return fmt.Errorf("save candidate: %w", err)
	}
	return nil
}

// RemoveCandidate deletes candidates/<id>.json.
func (l Layout) RemoveCandidate(s Spec) error {
	if err := os.Remove(l.CandidatePath(s)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove candidate: %w", err)
	}
	return nil
}

// IsDone reports whether done/<id>.md exists.
func (l Layout) IsDone(s Spec) (bool, error) { return workspace.Exists(l.DonePath(s)) }

// DoneRecord is what done/<id>.md records.
type DoneRecord struct {
	Commit       string
	BaseCommit   string
	PlanAttempt  int
	ImplAttempts int
	Report       string
	At           time.Time
}

// MarkDone writes done/<id>.md.
func (l Layout) MarkDone(s Spec, d DoneRecord) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Done: %s\n\n", s.ID)
	fmt.Fprintf(&b, "- Spec: %s\n", l.RootRel(l.SpecPath(s)))
	fmt.Fprintf(&b, "- Verified at (UTC): %s\n", stamp(d.At))
	fmt.Fprintf(&b, "- Commits: %s..%s\n", short(d.BaseCommit), short(d.Commit))
	fmt.Fprintf(&b, "- Plan attempt: %d\n", d.PlanAttempt)
	fmt.Fprintf(&b, "- Implementation attempts: %d\n", d.ImplAttempts)
	if r := strings.TrimSpace(d.Report); r != "" {
		fmt.Fprintf(&b, "\n## Verifier report\n\n%s\n", r)
	}
	if err := workspace.WriteFile(l.DonePath(s), []byte(b.String())); err != nil {
		return fmt.Errorf("mark done: %w", err)
	}
	return nil
}

// RemoveDone deletes done/<id>.md (for --force).
func (l Layout) RemoveDone(s Spec) error {
	if err := os.Remove(l.DonePath(s)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove done marker: %w", err)
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Step is what a spec needs next.
type Step string

// Steps, in pipeline order.
const (
	StepPlan      Step = "plan"      // no usable plan: run the planner
	StepImplement Step = "implement" // an active plan and no candidate
	StepVerify    Step = "verify"    // a candidate awaits verification
	StepDone      Step = "done"      // verified
)

// Position is where a spec stands on disk.
type Position struct {
	Step Step
	// Info is the plan's metadata, nil when there is none.
	Info *PlanInfo
	// Plan is the active plan's content (implement and verify).
	Plan string
	// PrevPlan and Reason are the invalidated plan and why, for a re-plan.
	PrevPlan string
	Reason   string
	// Candidate is set for StepVerify.
	Candidate *Candidate
	// HandWritten is true when a plan without a json was adopted.
	HandWritten bool
}

// Position reads where a spec stands and applies the resume rules:
//
//   - no json and no plan: a fresh plan is needed;
//   - json "active" and the plan exists: skip planning;
//   - json "invalidated": re-plan with the old plan and the reason (a plan
//     still at plans/<id>.md is archived first);
//   - a plan but no json: a hand-written plan, treated as active; the json
//     is created (attempt 1).
//
// An active json whose plan is missing needs a fresh plan too.
func (l Layout) Position(s Spec, now time.Time) (Position, error) {
	if done, err := l.IsDone(s); err != nil {
		return Position{}, err
	} else if done {
		return Position{Step: StepDone}, nil
	}
	info, err := l.LoadPlanInfo(s)
	if err != nil {
		return Position{}, err
	}
	plan, hasPlan, err := l.LoadPlanContent(s)
	if err != nil {
		return Position{}, err
	}
	pos := Position{Info: info}
	switch {
	case info == nil && !hasPlan:
		pos.Step = StepPlan
		return pos, nil
	case info == nil && hasPlan:
		info = &PlanInfo{Status: PlanActive, CreatedAtUTC: stamp(now), Attempt: 1}
		if err := l.SavePlanInfo(s, *info); err != nil {
			return Position{}, err
		}
		pos.Info, pos.HandWritten = info, true
	case info.Status == PlanInvalidated:
		if hasPlan {
			if err := l.archivePlan(s, max(info.Attempt, 1)); err != nil {
				return Position{}, fmt.Errorf("archive plan: %w", err)
			}
		}
		prev, err := os.ReadFile(l.ArchivedPlanPath(s, max(info.Attempt, 1)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return Position{}, fmt.Errorf("load archived plan: %w", err)
		}
		pos.Step, pos.PrevPlan, pos.Reason = StepPlan, string(prev), info.Reason()
		return pos, nil
	case !hasPlan:
		pos.Step = StepPlan
		return pos, nil
	}
	pos.Plan = plan
	c, err := l.LoadCandidate(s)
	if err != nil {
		return Position{}, err
	}
	if c != nil {
		pos.Step, pos.Candidate = StepVerify, c
		return pos, nil
	}
	pos.Step = StepImplement
	return pos, nil
}

// FileState is where a spec stands according to its files alone.
type FileState struct {
	// State is done, candidate, planned, invalidated or new.
	State string `json:"state"`
	// PlanAttempt is the plan's attempt, 0 without a plan json.
	PlanAttempt int `json:"plan_attempt"`
}

// Inspect reads a spec's state files without changing anything (unlike
// Position, which adopts hand-written plans).
func (l Layout) Inspect(s Spec) (FileState, error) {
	var fs FileState
	info, err := l.LoadPlanInfo(s)
	if err != nil {
		return fs, err
	}
	if info != nil {
		fs.PlanAttempt = info.Attempt
	}
	_, hasPlan, err := l.LoadPlanContent(s)
	if err != nil {
		return fs, err
	}
	done, err := l.IsDone(s)
	if err != nil {
		return fs, err
	}
	c, err := l.LoadCandidate(s)
	if err != nil {
		return fs, err
	}
	switch {
	case done:
		fs.State = StateDone
	case info != nil && info.Status == PlanInvalidated:
		fs.State = StateInvalidated
	case c != nil:
		fs.State = StateCandidate
	case hasPlan:
		fs.State = StatePlanned
	default:
		fs.State = StateNew
	}
	return fs, nil
}
