package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// ProcGroup is one row of proc_groups: a process group ralph started.
type ProcGroup struct {
	ID          int64     `json:"id"`
	PGID        int       `json:"pgid"`
	LeaderStart uint64    `json:"leader_start"`
	Token       string    `json:"-"`
	RalphPID    int       `json:"ralph_pid"`
	RalphStart  uint64    `json:"ralph_start"`
	TaskID      int64     `json:"task_id,omitempty"`
	Iteration   int       `json:"iteration,omitempty"`
	Argv0       string    `json:"argv0"`
	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at,omitzero"`
	EndNote     string    `json:"end_note,omitempty"`
}

// StartProcGroup records a group that has just started and returns its id.
func (s *Store) StartProcGroup(ctx context.Context, g ProcGroup) (int64, error) {
	var task sql.NullInt64
	if g.TaskID != 0 {
		task = sql.NullInt64{Int64: g.TaskID, Valid: true}
	}
	res, err := s.exec(ctx, `
		INSERT INTO proc_groups (pgid, leader_start, token, ralph_pid, ralph_start, task_id, iteration, argv0, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.PGID, int64(g.LeaderStart), g.Token, g.RalphPID, int64(g.RalphStart), task, g.Iteration, g.Argv0, s.stamp())
	if err != nil {
		return 0, fmt.Errorf("record process group: %w", err)
	}
	return res.LastInsertId()
}

// SetProcGroupLeader puts the group id and the leader's start time of a
// group recorded before it started (StartProcGroup) on its record.
func (s *Store) SetProcGroupLeader(ctx context.Context, id int64, pgid int, leaderStart uint64) error {
	_, err := s.exec(ctx, `UPDATE proc_groups SET pgid = ?, leader_start = ? WHERE id = ?`, pgid, int64(leaderStart), id)
	if err != nil {
		return fmt.Errorf("record process group leader: %w", err)
	}
	return nil
}

// EndProcGroup marks a recorded group ended, with a note on how.
func (s *Store) EndProcGroup(ctx context.Context, id int64, note string) error {
	if _, err := s.exec(ctx, endProcGroup, s.stamp(), note, id); err != nil {
		return fmt.Errorf("end process group: %w", err)
	}
	return nil
}

const endProcGroup = `UPDATE proc_groups SET ended_at = ?, end_note = ? WHERE id = ? AND ended_at IS NULL`

// EndProcGroupLater marks a recorded group ended, with a note on how, in
// the transaction of the store's next write through it (an iteration's
// end, the harness's state, the next events), or as the store closes:
// not a commit of its own after every program, and none between an
// agent's end and the harness's next steps. A ralph killed before then
// leaves the group on record as running, which is harmless: the next
// ralph finds it gone and closes the record (doctor).
func (s *Store) EndProcGroupLater(id int64, note string) {
	s.ended.add(groupEnd{id: id, note: note, at: s.stamp()})
}

// groupEnd is the record of a process group's end, not yet written.
type groupEnd struct {
	id       int64
	note, at string
}

// pendingEnds are the ended groups whose records wait for the store's
// next write.
type pendingEnds struct {
	mu   sync.Mutex
	ends []groupEnd
}

func (p *pendingEnds) add(g groupEnd) {
	p.mu.Lock()
	p.ends = append(p.ends, g)
	p.mu.Unlock()
}

func (p *pendingEnds) any() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ends) > 0
}

// take returns the pending records and forgets them; putBack returns
// those a write could not make.
func (p *pendingEnds) take() []groupEnd {
	p.mu.Lock()
	defer p.mu.Unlock()
	ends := p.ends
	p.ends = nil
	return ends
}

func (p *pendingEnds) putBack(ends []groupEnd) {
	if len(ends) == 0 {
		return
	}
	p.mu.Lock()
	p.ends = append(ends, p.ends...)
	p.mu.Unlock()
}

// RunningProcGroups returns the groups not marked ended, oldest first.
func (s *Store) RunningProcGroups(ctx context.Context) ([]ProcGroup, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT id, pgid, leader_start, token, ralph_pid, ralph_start, COALESCE(task_id, 0), iteration, argv0, started_at
		FROM proc_groups WHERE ended_at IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("running process groups: %w", err)
	}
	defer rows.Close()
	var out []ProcGroup
	for rows.Next() {
		var g ProcGroup
		var leader, ralph int64
		var started sql.NullString
		if err := rows.Scan(&g.ID, &g.PGID, &leader, &g.Token, &g.RalphPID, &ralph, &g.TaskID, &g.Iteration, &g.Argv0, &started); err != nil {
			return nil, fmt.Errorf("running process groups: %w", err)
		}
		g.LeaderStart, g.RalphStart, g.StartedAt = uint64(leader), uint64(ralph), parseTime(started)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("running process groups: %w", err)
	}
	return out, nil
}
