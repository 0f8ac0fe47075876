package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SpecRecord is one row of the specs table: the store's mirror of where a
// spec of the spec pipeline stands. The files under the specs folder
// (plans/, candidates/, done/) are the source of truth for the state; the
// record adds the counters, cost and last result the files do not hold.
type SpecRecord struct {
	// ID is the spec's path relative to the specs folder ("area/0002-bar.md").
	ID string `json:"id"`
	// State is the pipeline's last word on the spec: new, planning,
	// planned, implementing, candidate, verifying, done or failed.
	State string `json:"state"`
	// PlanAttempt counts planner runs.
	PlanAttempt int `json:"plan_attempt"`
	// ImplAttempts counts implementer runs.
	ImplAttempts int `json:"impl_attempts"`
	// VerifyAttempts counts verifier runs.
	VerifyAttempts int `json:"verify_attempts"`
	// LastResult is a one-line account of the last attempt.
	LastResult string `json:"last_result,omitempty"`
	// CostUSD sums the agents' reported cost for the spec.
	CostUSD float64 `json:"cost_usd"`
	// BaseCommit is HEAD before the first implementation attempt.
	BaseCommit string `json:"base_commit,omitempty"`
	// Feedback is what the next implementation attempt must read.
	Feedback string `json:"feedback,omitempty"`
	// Worktree is the git worktree a parallel run runs the spec in, ""
	// for a run in the workspace itself.
	Worktree string `json:"worktree,omitempty"`
	// Branch is the worktree's branch ("ralph/spec/<id>").
	Branch string `json:"branch,omitempty"`
	// LandedCommit is the commit the spec landed as on the run's branch.
	LandedCommit string `json:"landed_commit,omitempty"`
	// Conflicts counts landings that failed and went back to the
	// implementer.
	Conflicts int       `json:"conflicts,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

const specColumns = `id, state, plan_attempt, impl_attempts, verify_attempts, last_result, cost_usd, base_commit, feedback, worktree, branch, landed_commit, conflicts, updated_at`

func scanSpec(row interface{ Scan(...any) error }) (SpecRecord, error) {
	var r SpecRecord
	var at sql.NullString
	err := row.Scan(&r.ID, &r.State, &r.PlanAttempt, &r.ImplAttempts, &r.VerifyAttempts, &r.LastResult, &r.CostUSD, &r.BaseCommit, &r.Feedback, &r.Worktree, &r.Branch, &r.LandedCommit, &r.Conflicts, &at)
	r.UpdatedAt = parseTime(at)
	return r, err
}

// Spec returns the record of one spec; ok is false when there is none.
func (s *Store) Spec(ctx context.Context, id string) (rec SpecRecord, ok bool, err error) {
	rec, err = scanSpec(s.db.QueryRowContext(ctx, `SELECT `+specColumns+` FROM specs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return SpecRecord{}, false, nil
	}
	if err != nil {
		return SpecRecord{}, false, fmt.Errorf("read spec %s: %w", id, err)
	}
	return rec, true, nil
}

// Specs returns every spec record, by id.
func (s *Store) Specs(ctx context.Context) ([]SpecRecord, error) {
	return queryAll(ctx, s.db, "list specs", scanSpec, `SELECT `+specColumns+` FROM specs ORDER BY id`)
}

// PutSpec writes a spec record, replacing any record with its id. It sets
// UpdatedAt.
func (s *Store) PutSpec(ctx context.Context, r SpecRecord) error {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO specs (`+specColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			state = excluded.state, plan_attempt = excluded.plan_attempt,
			impl_attempts = excluded.impl_attempts, verify_attempts = excluded.verify_attempts,
			last_result = excluded.last_result, cost_usd = excluded.cost_usd,
			base_commit = excluded.base_commit, feedback = excluded.feedback,
			worktree = excluded.worktree, branch = excluded.branch,
			landed_commit = excluded.landed_commit, conflicts = excluded.conflicts,
			updated_at = excluded.updated_at`,
		r.ID, r.State, r.PlanAttempt, r.ImplAttempts, r.VerifyAttempts, r.LastResult, r.CostUSD, r.BaseCommit, r.Feedback, r.Worktree, r.Branch, r.LandedCommit, r.Conflicts, s.stamp())
	if err != nil {
		return fmt.Errorf("write spec %s: %w", r.ID, err)
	}
	return nil
}

// SpecCall is one agent call (or landing) of the spec pipeline: a row of
// spec_calls.
type SpecCall struct {
	ID int64 `json:"id"`
	// SpecID is the spec's record id; Worktree where it ran ("" for the
	// workspace itself).
	SpecID   string `json:"spec_id"`
	Worktree string `json:"worktree,omitempty"`
	// Role is planner, implementer, verifier or land.
	Role      string    `json:"role"`
	Attempt   int       `json:"attempt"`
	StartedAt time.Time `json:"started_at"`
	// EndedAt is zero while the call runs (or when its ralph died).
	EndedAt time.Time `json:"ended_at"`
	Outcome string    `json:"outcome,omitempty"`
	CostUSD float64   `json:"cost_usd"`
}

// StartSpecCall records that a call began and returns its id.
func (s *Store) StartSpecCall(ctx context.Context, specID, worktree, role string, attempt int) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO spec_calls (spec_id, worktree, role, attempt, started_at) VALUES (?, ?, ?, ?, ?)`,
		specID, worktree, role, attempt, s.stamp())
	if err != nil {
		return 0, fmt.Errorf("record %s call of %s: %w", role, specID, err)
	}
	return res.LastInsertId()
}

// EndSpecCall records how a call ended.
func (s *Store) EndSpecCall(ctx context.Context, id int64, outcome string, costUSD float64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE spec_calls SET ended_at = ?, outcome = ?, cost_usd = ? WHERE id = ?`, s.stamp(), outcome, costUSD, id)
	if err != nil {
		return fmt.Errorf("record the end of call %d: %w", id, err)
	}
	return nil
}

// SetSpecCallEvents records how many agent events call id has seen so far.
func (s *Store) SetSpecCallEvents(ctx context.Context, id int64, n int) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE spec_calls SET events = ? WHERE id = ?`, n, id); err != nil {
		return fmt.Errorf("record the events of call %d: %w", id, err)
	}
	return nil
}

// SpecCallProgress is the latest agent call's role and attempt and the
// events all calls have seen; ok is false when none was recorded.
func (s *Store) SpecCallProgress(ctx context.Context) (role string, attempt, events int, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT role, attempt, (SELECT COALESCE(SUM(events), 0) FROM spec_calls) FROM spec_calls ORDER BY id DESC LIMIT 1`).Scan(&role, &attempt, &events)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, 0, false, nil
	}
	if err != nil {
		return "", 0, 0, false, fmt.Errorf("read spec call progress: %w", err)
	}
	return role, attempt, events, true, nil
}

// SpecCalls returns the calls with an id above after, oldest first.
func (s *Store) SpecCalls(ctx context.Context, after int64) ([]SpecCall, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, spec_id, worktree, role, attempt, started_at, ended_at, outcome, cost_usd FROM spec_calls WHERE id > ? ORDER BY id`, after)
	if err != nil {
		return nil, fmt.Errorf("list spec calls: %w", err)
	}
	defer rows.Close()
	var out []SpecCall
	for rows.Next() {
		var c SpecCall
		var start, end sql.NullString
		if err := rows.Scan(&c.ID, &c.SpecID, &c.Worktree, &c.Role, &c.Attempt, &start, &end, &c.Outcome, &c.CostUSD); err != nil {
			return nil, fmt.Errorf("list spec calls: %w", err)
		}
		c.StartedAt, c.EndedAt = parseTime(start), parseTime(end)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list spec calls: %w", err)
	}
	return out, nil
}
