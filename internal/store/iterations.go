package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Iteration is one row of the iterations table.
type Iteration struct {
	TaskID       int64     `json:"task_id"`
	Number       int       `json:"number"`
	Phase        string    `json:"phase"`
	Step         string    `json:"step,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
	Outcome      string    `json:"outcome"`
	ToolCalls    int       `json:"tool_calls"`
	Signature    string    `json:"signature,omitempty"`
	Final        string    `json:"final,omitempty"`
	CostUSD      float64   `json:"cost_usd"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	// Tree is the working tree's git tree after the iteration, "" when
	// none was recorded.
	Tree string `json:"tree,omitempty"`
}

// StartIteration records the start of an iteration, and sets the state
// keys of with in the same transaction (the harness's seal of its files,
// which must be on record before the agent runs, and is then on record
// with the iteration it belongs to). Starting the same number twice (a
// retry after a rate limit) resets its row.
func (s *Store) StartIteration(ctx context.Context, taskID int64, number int, phase, step string, with ...StateValue) error {
	var err error
	if len(with) == 0 {
		_, err = s.exec(ctx, startIteration, taskID, number, phase, step, s.stamp())
	} else {
		err = s.startWith(ctx, []any{taskID, number, phase, step, s.stamp()}, with)
	}
	if err != nil {
		return fmt.Errorf("start iteration: %w", err)
	}
	return nil
}

// startWith runs startIteration with args and sets the state of with, in
// one transaction.
func (s *Store) startWith(ctx context.Context, args []any, with []StateValue) error {
	start, err := s.stmt(ctx, startIteration)
	if err != nil {
		return err
	}
	set, err := s.stmt(ctx, setState)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.StmtContext(ctx, start).ExecContext(ctx, args...); err != nil {
			return err
		}
		for _, kv := range with {
			if _, err := tx.StmtContext(ctx, set).ExecContext(ctx, kv.Key, kv.Value, s.stamp()); err != nil {
				return err
			}
		}
		return nil
	})
}

const startIteration = `
	INSERT INTO iterations (task_id, number, phase, step, started_at) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (task_id, number) DO UPDATE SET phase = excluded.phase, step = excluded.step,
		started_at = excluded.started_at, ended_at = NULL, outcome = ''`

// EndIteration records how an iteration ended and adds its usage to the
// task's totals, and deletes the state keys of drop (the harness's seal,
// once used), in one transaction, once every event queued before it is
// committed: a committed iteration's end never precedes its events.
func (s *Store) EndIteration(ctx context.Context, it Iteration, drop ...string) error {
	s.waitEvents()
	var sts [3]*sql.Stmt
	for i, q := range endIteration {
		var err error
		if sts[i], err = s.stmt(ctx, q); err != nil {
			return fmt.Errorf("end iteration: %w", err)
		}
	}
	var del *sql.Stmt
	if len(drop) > 0 {
		var err error
		if del, err = s.stmt(ctx, deleteState); err != nil {
			return fmt.Errorf("end iteration: %w", err)
		}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, key := range drop {
			if _, err := tx.StmtContext(ctx, del).ExecContext(ctx, key); err != nil {
				return fmt.Errorf("end iteration: %w", err)
			}
		}
		var prevCost float64
		var prevIn, prevOut int64
		err := tx.StmtContext(ctx, sts[0]).QueryRowContext(ctx, it.TaskID, it.Number).Scan(&prevCost, &prevIn, &prevOut)
		if err != nil {
			return fmt.Errorf("end iteration: %w", err)
		}
		_, err = tx.StmtContext(ctx, sts[1]).ExecContext(ctx,
			s.stamp(), it.Outcome, it.ToolCalls, it.Signature, it.Final, it.CostUSD, it.InputTokens, it.OutputTokens, it.Tree,
			it.TaskID, it.Number)
		if err != nil {
			return fmt.Errorf("end iteration: %w", err)
		}
		_, err = tx.StmtContext(ctx, sts[2]).ExecContext(ctx,
			it.CostUSD-prevCost, it.InputTokens-prevIn, it.OutputTokens-prevOut, it.TaskID)
		return err
	})
}

// endIteration is EndIteration's SQL: the iteration's previous usage,
// its end, the task's totals.
var endIteration = [3]string{
	`SELECT cost_usd, input_tokens, output_tokens FROM iterations WHERE task_id = ? AND number = ?`,
	`UPDATE iterations SET ended_at = ?, outcome = ?, tool_calls = ?, signature = ?, final = ?,
		cost_usd = ?, input_tokens = ?, output_tokens = ?, tree = ?
	WHERE task_id = ? AND number = ?`,
	`UPDATE tasks SET cost_usd = cost_usd + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?
	WHERE id = ?`,
}

// CloseOpenIterations marks iterations that never ended (the process
// died) as interrupted.
func (s *Store) CloseOpenIterations(ctx context.Context, taskID int64) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE iterations SET ended_at = ?, outcome = 'interrupted' WHERE task_id = ? AND ended_at IS NULL`,
		s.stamp(), taskID)
	return err
}

// IterationTotals is what a task's iterations add up to, read without
// reading each: how many, their tool calls, and the last one's number.
type IterationTotals struct {
	Count, ToolCalls, Last int
}

// IterationTotals sums the task's iterations in SQLite, through the
// (task_id, number) index, for views that need the totals only.
func (s *Store) IterationTotals(ctx context.Context, taskID int64) (IterationTotals, error) {
	var t IterationTotals
	err := s.db.QueryRowContext(ctx,
		`SELECT COUNT(*), COALESCE(SUM(tool_calls), 0), COALESCE(MAX(number), 0) FROM iterations WHERE task_id = ?`, taskID).
		Scan(&t.Count, &t.ToolCalls, &t.Last)
	if err != nil {
		return IterationTotals{}, fmt.Errorf("sum iterations: %w", err)
	}
	return t, nil
}

// Iterations returns a task's iterations in order.
func (s *Store) Iterations(ctx context.Context, taskID int64) ([]Iteration, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT task_id, number, phase, step, started_at, ended_at, outcome, tool_calls, signature, final,
			cost_usd, input_tokens, output_tokens, tree
		FROM iterations WHERE task_id = ? ORDER BY number`, taskID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Iteration
	for rows.Next() {
		var it Iteration
		var started, ended sql.NullString
		if err := rows.Scan(&it.TaskID, &it.Number, &it.Phase, &it.Step, &started, &ended, &it.Outcome, &it.ToolCalls,
			&it.Signature, &it.Final, &it.CostUSD, &it.InputTokens, &it.OutputTokens, &it.Tree); err != nil {
			return nil, err
		}
		it.StartedAt, it.EndedAt = parseTime(started), parseTime(ended)
		out = append(out, it)
	}
	return out, rows.Err()
}
