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
	Feedback  string    `json:"feedback,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

const specColumns = `id, state, plan_attempt, impl_attempts, verify_attempts, last_result, cost_usd, base_commit, feedback, updated_at`

func scanSpec(row interface{ Scan(...any) error }) (SpecRecord, error) {
	var r SpecRecord
	var at sql.NullString
	err := row.Scan(&r.ID, &r.State, &r.PlanAttempt, &r.ImplAttempts, &r.VerifyAttempts, &r.LastResult, &r.CostUSD, &r.BaseCommit, &r.Feedback, &at)
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
	rows, err := s.db.QueryContext(ctx, `SELECT `+specColumns+` FROM specs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list specs: %w", err)
	}
	defer rows.Close()
	var out []SpecRecord
	for rows.Next() {
		r, err := scanSpec(rows)
		if err != nil {
			return nil, fmt.Errorf("list specs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list specs: %w", err)
	}
	return out, nil
}

// PutSpec writes a spec record, replacing any record with its id. It sets
// UpdatedAt.
func (s *Store) PutSpec(ctx context.Context, r SpecRecord) error {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO specs (`+specColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			state = excluded.state, plan_attempt = excluded.plan_attempt,
			impl_attempts = excluded.impl_attempts, verify_attempts = excluded.verify_attempts,
			last_result = excluded.last_result, cost_usd = excluded.cost_usd,
			base_commit = excluded.base_commit, feedback = excluded.feedback,
			updated_at = excluded.updated_at`,
		r.ID, r.State, r.PlanAttempt, r.ImplAttempts, r.VerifyAttempts, r.LastResult, r.CostUSD, r.BaseCommit, r.Feedback, s.stamp())
	if err != nil {
		return fmt.Errorf("write spec %s: %w", r.ID, err)
	}
	return nil
}
