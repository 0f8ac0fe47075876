package registry

import (
	"context"
	"log/slog"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/api"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/task"
)

// Answerer is an agent that can answer one question in its
// non-interactive single-answer mode, without tools: the task parser's
// model when no model API is configured.
type Answerer interface {
	agent.Agent
	// Answers reports whether the agent can answer single questions as
	// configured.
	Answers() bool
	// Complete answers one question.
	Complete(ctx context.Context, system, user string) (string, error)
}

// AnswerTimeout bounds an agent's single answer to the task parser.
const AnswerTimeout = 60 * time.Second

// TaskParser returns the parser that writes task.md (SPEC §8). [task]
// parser = "template" never asks a model. Otherwise the api agent's model
// splits the task when the run uses the api agent, ralph.toml configures
// it, or parser = "model" asks for it; failing that, on "auto", the run's
// own agent does, with one single answer bounded by AnswerTimeout. With
// neither, the template is written, and the run says why.
func TaskParser(cfg config.Config, ag agent.Agent, logger *slog.Logger) *task.Parser {
	p := &task.Parser{Logger: logger}
	if cfg.Task.Parser == "template" {
		return p
	}
	_, configured := cfg.Agents["api"]
	auto := cfg.Task.Parser == "" || cfg.Task.Parser == "auto"
	if !auto || ag.Name() == "api" || configured {
		m, err := api.NewModel(APIConfig(cfg, cfg.Agents["api"], Flags{}), logger)
		if err == nil {
			p.Model, p.By = m, "the api model"
			return p
		}
		logger.Warn("task parser: no model API", "err", err)
	}
	if a, ok := ag.(Answerer); ok && a.Answers() {
		p.Model, p.Timeout = a, AnswerTimeout
		p.By = a.Name() + ", in one answer"
	}
	return p
}
