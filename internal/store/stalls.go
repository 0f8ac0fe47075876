package store

import (
	"context"
	"fmt"
)

// Stall records a stall the detectors declared.
type Stall struct {
	TaskID    int64  `json:"task_id"`
	Iteration int    `json:"iteration"`
	Kind      string `json:"kind"`
	Reason    string `json:"reason"`
	Evidence  string `json:"evidence,omitempty"`
	Action    string `json:"action"`
}

// Stall actions: what the engine did about a stall.
const (
	StallRecovered  = "recovered"   // snapshot and recovery guidance
	StallRolledBack = "rolled-back" // the second stall: back to task-N-pre
)

// AddStall records a stall.
func (s *Store) AddStall(ctx context.Context, st Stall) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO stalls (task_id, iteration, kind, reason, evidence, action, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		st.TaskID, st.Iteration, st.Kind, st.Reason, st.Evidence, st.Action, s.stamp())
	if err != nil {
		return fmt.Errorf("record stall: %w", err)
	}
	return nil
}

// StallRecoveries counts the stalls of a task the engine recovered from
// (StallRecovered), so that a resumed task knows its next stall is a
// second one.
func (s *Store) StallRecoveries(ctx context.Context, taskID int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM stalls WHERE task_id = ? AND action = ?`, taskID, StallRecovered).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count stall recoveries: %w", err)
	}
	return n, nil
}
