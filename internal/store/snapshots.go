package store

import (
	"context"
	"fmt"
)

// Snapshot records a snapshot ralph took.
type Snapshot struct {
	Name    string `json:"name"`
	Commit  string `json:"commit"`
	Task    int    `json:"task"`
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// AddSnapshot records a snapshot.
func (s *Store) AddSnapshot(ctx context.Context, snap Snapshot) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO snapshots (name, commit_sha, task, kind, message, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		snap.Name, snap.Commit, snap.Task, snap.Kind, snap.Message, s.stamp())
	if err != nil {
		return fmt.Errorf("record snapshot: %w", err)
	}
	return nil
}

// HasSnapshot reports whether a snapshot called name is on record.
func (s *Store) HasSnapshot(ctx context.Context, name string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM snapshots WHERE name = ?`, name).Scan(&n); err != nil {
		return false, fmt.Errorf("look up snapshot %s: %w", name, err)
	}
	return n > 0, nil
}
