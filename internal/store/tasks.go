package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNoTask means the workspace has no task on record.
var ErrNoTask = errors.New("no task has been run in this workspace")

// Task is one row of the tasks table.
type Task struct {
	ID           int64     `json:"id"`
	Number       int       `json:"number"`
	Message      string    `json:"message"`
	Type         string    `json:"type"`
	Agent        string    `json:"agent"`
	Status       string    `json:"status"` // running | done | interrupted
	Reason       string    `json:"reason,omitempty"`
	Detail       string    `json:"detail,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
	CostUSD      float64   `json:"cost_usd"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
}

// Task statuses.
const (
	TaskRunning     = "running"
	TaskDone        = "done"
	TaskInterrupted = "interrupted"
)

// CreateTask records a new task and returns its id.
func (s *Store) CreateTask(ctx context.Context, number int, message, typ, agentName string) (int64, error) {
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO tasks (number, message, type, agent, started_at) VALUES (?, ?, ?, ?, ?)`,
		number, message, typ, agentName, s.stamp())
	if err != nil {
		return 0, fmt.Errorf("create task: %w", err)
	}
	return res.LastInsertId()
}

// BeginTask records a new task and, in the same transaction, the state
// keys state returns for its id, so that the task and what a resume needs
// to continue its start reach the store together or not at all.
func (s *Store) BeginTask(ctx context.Context, number int, message, typ, agentName string, state func(id int64) map[string]string) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO tasks (number, message, type, agent, started_at) VALUES (?, ?, ?, ?, ?)`,
			number, message, typ, agentName, s.stamp())
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if state == nil {
			return nil
		}
		for k, v := range state(id) {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO state (key, value, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
				k, v, s.stamp()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("create task: %w", err)
	}
	return id, nil
}

// RequestKey is the state key that maps a ralph run request's token to the
// id of the task it created (see BeginTask).
func RequestKey(token string) string { return "request:" + token }

// MaxTaskNumber returns the highest task number on record, 0 for none.
func (s *Store) MaxTaskNumber(ctx context.Context) (int, error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(number) FROM tasks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("highest task number: %w", err)
	}
	return int(n.Int64), nil
}

// SetTaskType records the task's classification.
func (s *Store) SetTaskType(ctx context.Context, id int64, typ string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE tasks SET type = ? WHERE id = ?`, typ, id)
	return err
}

// SetTaskAgent records which agent drives the task (a resume may change it).
func (s *Store) SetTaskAgent(ctx context.Context, id int64, agentName string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE tasks SET agent = ? WHERE id = ?`, agentName, id)
	return err
}

// EndTask records how a task ended. Status is TaskDone or TaskInterrupted.
func (s *Store) EndTask(ctx context.Context, id int64, status, reason, detail string) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE tasks SET status = ?, reason = ?, detail = ?, ended_at = ? WHERE id = ?`,
		status, reason, detail, s.stamp(), id)
	if err != nil {
		return fmt.Errorf("end task: %w", err)
	}
	return nil
}

// ReopenTask marks a task running again for a resume.
func (s *Store) ReopenTask(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE tasks SET status = 'running', reason = '', detail = '', ended_at = NULL WHERE id = ?`, id)
	return err
}

const taskColumns = `id, number, message, type, agent, status, reason, detail, started_at, ended_at, cost_usd, input_tokens, output_tokens`

func scanTask(row interface{ Scan(...any) error }) (Task, error) {
	var t Task
	var started, ended sql.NullString
	err := row.Scan(&t.ID, &t.Number, &t.Message, &t.Type, &t.Agent, &t.Status, &t.Reason, &t.Detail,
		&started, &ended, &t.CostUSD, &t.InputTokens, &t.OutputTokens)
	t.StartedAt, t.EndedAt = parseTime(started), parseTime(ended)
	return t, err
}

// LatestTask returns the most recent task.
func (s *Store) LatestTask(ctx context.Context) (Task, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks ORDER BY id DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNoTask
	}
	return t, err
}

// GetTask returns a task by id.
func (s *Store) GetTask(ctx context.Context, id int64) (Task, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNoTask
	}
	return t, err
}

// TaskByNumber returns the latest task numbered n (a rollback can let a
// number be taken again).
func (s *Store) TaskByNumber(ctx context.Context, n int) (Task, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE number = ? ORDER BY id DESC LIMIT 1`, n))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNoTask
	}
	return t, err
}

// Tasks returns every task, oldest first.
func (s *Store) Tasks(ctx context.Context) ([]Task, error) {
	return queryAll(ctx, s.db, "list tasks", scanTask, `SELECT `+taskColumns+` FROM tasks ORDER BY id`)
}
