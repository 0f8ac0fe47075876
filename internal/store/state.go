package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// State keys other processes write for the running loop to read.
const (
	// KeyStopRequest holds the reason of a pending stop request.
	KeyStopRequest = "stop_requested"
)

// SetState writes a key.
func (s *Store) SetState(ctx context.Context, key, value string) error {
	if _, err := s.exec(ctx, setState, key, value, s.stamp()); err != nil {
		return fmt.Errorf("set state %s: %w", key, err)
	}
	return nil
}

const setState = `
	INSERT INTO state (key, value, updated_at) VALUES (?, ?, ?)
	ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`

// StateValue is a state key and the value to set it to, in a write that
// sets it together with something else (StartIteration).
type StateValue struct{ Key, Value string }

// State reads a key; ok is false when it is not set.
func (s *Store) State(ctx context.Context, key string) (value string, ok bool, err error) {
	st, err := s.stmt(ctx, `SELECT value FROM state WHERE key = ?`)
	if err == nil {
		err = st.QueryRowContext(ctx, key).Scan(&value)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read state %s: %w", key, err)
	}
	return value, true, nil
}

// DeleteState removes a key.
func (s *Store) DeleteState(ctx context.Context, key string) error {
	_, err := s.exec(ctx, deleteState, key)
	return err
}

const deleteState = `DELETE FROM state WHERE key = ?`

// DeleteStatePrefix removes every key that begins with prefix, which
// must not be empty.
func (s *Store) DeleteStatePrefix(ctx context.Context, prefix string) error {
	if prefix == "" || prefix[len(prefix)-1] == 0xff {
		return fmt.Errorf("delete state %q…: not a prefix this can delete", prefix)
	}
	// The keys from prefix up to, not including, prefix with its last
	// byte one higher: those that begin with prefix (keys compare as
	// bytes).
	end := prefix[:len(prefix)-1] + string([]byte{prefix[len(prefix)-1] + 1})
	if _, err := s.exec(ctx, `DELETE FROM state WHERE key >= ? AND key < ?`, prefix, end); err != nil {
		return fmt.Errorf("delete state %s…: %w", prefix, err)
	}
	return nil
}
