package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Kinds of step rows: the phases and entries of an orchestration plan.
const (
	StepKindPhase = "phase"
	StepKindStep  = "step"
	StepKindHuman = "human"
	StepKindStop  = "stop"
)

// Statuses of step rows.
const (
	StepRunning  = "running"
	StepDone     = "done"
	StepFailed   = "failed"
	StepSkipped  = "skipped"
	StepStopped  = "stopped"
	StepRejected = "rejected"
)

// StepRecord is one row of the steps table: a phase, step, human request
// or stop of an orchestration plan, and its outcome. A row is identified
// by its task, kind and index (the entry's position in the plan's walk,
// or the phase's position among the phases).
type StepRecord struct {
	TaskID    int64     `json:"task_id"`
	Index     int       `json:"idx"`
	Kind      string    `json:"kind"`
	Phase     string    `json:"phase,omitempty"`
	Name      string    `json:"name,omitempty"`
	Status    string    `json:"status"`
	Detail    string    `json:"detail,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

const stepColumns = `task_id, idx, kind, phase, name, status, detail, started_at, ended_at`

func scanStep(row interface{ Scan(...any) error }) (StepRecord, error) {
	var r StepRecord
	var started, ended sql.NullString
	err := row.Scan(&r.TaskID, &r.Index, &r.Kind, &r.Phase, &r.Name, &r.Status, &r.Detail, &started, &ended)
	r.StartedAt, r.EndedAt = parseTime(started), parseTime(ended)
	return r, err
}

// Step returns the row of one entry; ok is false when it never started.
func (s *Store) Step(ctx context.Context, taskID int64, kind string, idx int) (r StepRecord, ok bool, err error) {
	r, err = scanStep(s.db.QueryRowContext(ctx, `SELECT `+stepColumns+` FROM steps WHERE task_id = ? AND kind = ? AND idx = ?
		ORDER BY id DESC LIMIT 1`, taskID, kind, idx))
	if errors.Is(err, sql.ErrNoRows) {
		return StepRecord{}, false, nil
	}
	if err != nil {
		return StepRecord{}, false, fmt.Errorf("read step: %w", err)
	}
	return r, true, nil
}

// StartStep records that an entry is running: it adds the row, or sets an
// existing one that did not finish (stopped, failed) back to running. A
// row that is already running is left as it is.
func (s *Store) StartStep(ctx context.Context, r StepRecord) error {
	return s.setStep(ctx, r, StepRunning, "")
}

// EndStep records an entry's outcome, adding the row when the entry never
// started (a skipped step, a stop).
func (s *Store) EndStep(ctx context.Context, r StepRecord, status, detail string) error {
	return s.setStep(ctx, r, status, detail)
}

func (s *Store) setStep(ctx context.Context, r StepRecord, status, detail string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT id, status FROM steps WHERE task_id = ? AND kind = ? AND idx = ? ORDER BY id DESC LIMIT 1`,
			r.TaskID, r.Kind, r.Index).Scan(&id, &cur)
		var ended any
		if status != StepRunning {
			ended = s.stamp()
		}
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, `INSERT INTO steps (task_id, idx, kind, phase, name, status, detail, started_at, ended_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.TaskID, r.Index, r.Kind, r.Phase, r.Name, status, detail, s.stamp(), ended)
			return err
		}
		if err != nil {
			return err
		}
		if cur == status {
			return nil
		}
		if status == StepRunning {
			_, err = tx.ExecContext(ctx, `UPDATE steps SET status = ?, ended_at = NULL WHERE id = ?`, status, id)
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE steps SET status = ?, detail = ?, ended_at = ? WHERE id = ?`, status, detail, ended, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("record %s %q: %w", r.Kind, r.Name, err)
	}
	return nil
}

// Steps returns a task's step rows in the order they started.
func (s *Store) Steps(ctx context.Context, taskID int64) ([]StepRecord, error) {
	return queryAll(ctx, s.db, "list steps", scanStep, `SELECT `+stepColumns+` FROM steps WHERE task_id = ? ORDER BY id`, taskID)
}
