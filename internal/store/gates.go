package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// GateResult is one gate's verdict at one completion attempt.
type GateResult struct {
	TaskID    int64     `json:"task_id"`
	Iteration int       `json:"iteration"`
	Gate      string    `json:"gate"`
	Status    string    `json:"status"` // pass, fail, warn or skip
	Message   string    `json:"message,omitempty"`
	Fix       string    `json:"fix,omitempty"`
	At        time.Time `json:"at"`
}

// AddGateResults records the verdicts of one gate run.
func (s *Store) AddGateResults(ctx context.Context, results []GateResult) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			_, err := tx.ExecContext(ctx,
				`INSERT INTO gate_results (task_id, iteration, gate, status, message, fix, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				r.TaskID, r.Iteration, r.Gate, r.Status, s.scrub.String(r.Message), s.scrub.String(r.Fix), s.stamp())
			if err != nil {
				return fmt.Errorf("add gate result: %w", err)
			}
		}
		return nil
	})
}

// GateResults returns a task's gate verdicts in order.
func (s *Store) GateResults(ctx context.Context, taskID int64) ([]GateResult, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT task_id, iteration, gate, status, message, fix, at FROM gate_results WHERE task_id = ? ORDER BY id`, taskID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []GateResult
	for rows.Next() {
		var r GateResult
		var at sql.NullString
		if err := rows.Scan(&r.TaskID, &r.Iteration, &r.Gate, &r.Status, &r.Message, &r.Fix, &at); err != nil {
			return nil, err
		}
		r.At = parseTime(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
