package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/task"
)

// Model is a one-shot completion with the configured provider, no tools:
// the task parser's Option A.
type Model struct {
	c *client
}

var _ task.Model = (*Model)(nil)

// NewModel returns a task.Model for cfg. It fails when no provider or key
// can be found. Rate limits and server errors are retried as in Run,
// within the caller's deadline.
func NewModel(cfg Config, logger *slog.Logger) (task.Model, error) {
	c, err := newClient(cfg, logger, "agent/api/model")
	if err != nil {
		return nil, err
	}
	return &Model{c: c}, nil
}

// Complete sends system as the system prompt and user as the one user
// message, and returns the model's text.
func (m *Model) Complete(ctx context.Context, system, user string) (string, error) {
	tr := turnRequest{
		System:    system,
		Messages:  []message{{Role: roleUser, Text: user}},
		MaxTokens: int64(m.c.cfg.MaxTokens),
	}
	retries := 0
	rep, err := m.c.retry.send(ctx, m.c.prov, &tr, 0, &retries, func(ev agent.Event) {
		m.c.log.Info(ev.Text)
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("model completion: %w", err)
	}
	if strings.TrimSpace(rep.Text) == "" {
		return "", errors.New("model completion: empty answer")
	}
	return rep.Text, nil
}
