package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Model is the one model call the task parser needs: a system prompt and a
// user prompt in, the model's text out. The API agent implements it with
// the configured provider; it should honour ctx.
type Model interface {
	Complete(ctx context.Context, system, user string) (string, error)
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, system, user string) (string, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx context.Context, system, user string) (string, error) {
	return f(ctx, system, user)
}

var _ Model = ModelFunc(nil)

// Input is what the parser knows at task intake.
type Input struct {
	// Message is the user's raw message.
	Message string
	// PlanExists reports whether .ralph/plan.tsx exists.
	PlanExists bool
	// PreviousSummary is the previous task's summary.md, if any.
	PreviousSummary string
	// Files lists the project's files; the prompt shows the first
	// MaxPromptFiles.
	Files []string
	// Counter is the new task's number N.
	Counter int
	// Previous names the snapshot the task starts from, such as
	// "task-2-post"; empty means "none".
	Previous string
}

// Method names the seed's two ways of writing task.md.
type Method string

// The two parse methods of seed 002 §5.
const (
	// OptionA is the model-assisted parse.
	OptionA Method = "A"
	// OptionB is the template with the raw message.
	OptionB Method = "B"
)

// Option records how a Task was produced and, for Option B, why.
type Option struct {
	Method Method
	// Reason says why the parser fell back to Option B: ReasonNoModel,
	// ReasonTimeout, ReasonCanceled, or a reason starting "model error: ",
	// "invalid JSON: " or "schema: ". Empty for Option A.
	Reason string
	// By names who split the task for Option A (Parser.By).
	By string
}

// String says in plain words how task.md was written: "split into
// requirements by the model" or "written from the template (timeout)".
func (o Option) String() string {
	if o.Method == OptionA {
		by := o.By
		if by == "" {
			by = "the model"
		}
		return "split into requirements by " + by
	}
	if o.Reason == "" {
		return "written from the template"
	}
	return fmt.Sprintf("written from the template (%s)", o.Reason)
}

// Fixed fallback reasons; the others carry details after a prefix.
const (
	// ReasonNoModel: the Parser has no Model.
	ReasonNoModel = "no model configured"
	// ReasonTimeout: the model did not answer within Parser.Timeout.
	ReasonTimeout = "timeout"
	// ReasonCanceled: the caller's context ended.
	ReasonCanceled = "canceled"
)

// DefaultTimeout bounds the model call when Parser.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// errTimeout is the cancellation cause of the parser's own deadline.
var errTimeout = errors.New("task parse timeout")

// Parser turns a raw message into a Task: Option A with a Model, Option B
// (Template) when there is none or anything about Option A fails.
type Parser struct {
	// Model answers the Option A prompt; nil means Option B always.
	Model Model
	// Timeout bounds the model call; zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives fallback reasons and sanity-net adjustments; nil
	// discards them.
	Logger *slog.Logger
	// By names who answers for Model in what the run shows ("the api
	// model", "claude, in one answer without tools"); empty means "the
	// model".
	By string
}

// Parse structures in.Message. A nil Parser has no model. It never fails
// because of the model: any
// model error, timeout, unreadable or schema-violating answer gives the
// Option B template, with Option.Reason saying why. The one error returned
// is the caller's ctx ending, alongside the template.
func (p *Parser) Parse(ctx context.Context, in Input) (Task, Option, error) {
	log := p.logger()
	t, reason := p.optionA(ctx, in)
	if reason == "" {
		log.Info("task parsed", "method", OptionA, "type", t.Type, "requirements", len(t.Requirements))
		return t, Option{Method: OptionA, By: p.By}, nil
	}

	t = Template(in.Message, in.Counter, in.Previous)
	t.Likely = Classify(in.Message, in.PlanExists)
	opt := Option{Method: OptionB, Reason: reason}
	if reason == ReasonCanceled {
		return t, opt, fmt.Errorf("parse task: %w", ctx.Err())
	}
	level := slog.LevelWarn
	if reason == ReasonNoModel {
		level = slog.LevelInfo // a configuration choice, not a failure
	}
	log.Log(ctx, level, "task parse fell back to template", "method", OptionB, "reason", reason, "likely", t.Likely)
	return t, opt, nil
}

// optionA runs the model-assisted parse. It returns the Task, or an empty
// Task and the reason to fall back to Option B.
func (p *Parser) optionA(ctx context.Context, in Input) (Task, string) {
	if p == nil || p.Model == nil {
		return Task{}, ReasonNoModel
	}
	if ctx.Err() != nil {
		return Task{}, ReasonCanceled
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()

	out, err := complete(callCtx, p.Model, systemPrompt(), userPrompt(in))
	switch {
	case ctx.Err() != nil:
		return Task{}, ReasonCanceled
	case errors.Is(context.Cause(callCtx), errTimeout):
		return Task{}, ReasonTimeout
	case err != nil:
		return Task{}, "model error: " + oneLine(err.Error())
	}

	data, err := extractJSON(out)
	if err != nil {
		return Task{}, "invalid JSON: " + err.Error()
	}
	a, err := decodeAnswer(data)
	if se, ok := errors.AsType[*SchemaError](err); ok {
		return Task{}, "schema: " + se.Error()
	} else if err != nil {
		return Task{}, "invalid JSON: " + err.Error()
	}

	t := Task{
		Title:         a.Title,
		Type:          a.Type,
		Previous:      in.Previous,
		Counter:       in.Counter,
		Requirements:  a.Requirements,
		Preserve:      a.Preserve,
		AffectedFiles: a.AffectedFiles,
		Question:      a.Question,
		Original:      in.Message,
	}
	if t.Previous == "" {
		t.Previous = "none"
	}
	p.sanity(&t, in)
	return t, ""
}

// sanity corrects model answers that cannot be right whatever the message
// says: there is no plan to mutate when none exists. Other disagreements
// with the local classifier are only logged; the model reads the message
// better than a word list does.
func (p *Parser) sanity(t *Task, in Input) {
	log := p.logger()
	if t.Type == Mutation && !in.PlanExists {
		log.Info("task type adjusted", "from", Mutation, "to", Fresh, "why", "no plan exists")
		t.Type = Fresh
	}
	if local := Classify(in.Message, in.PlanExists); local != t.Type {
		log.Debug("local classifier disagrees", "model", t.Type, "local", local)
	}
}

// complete calls m in its own goroutine so that a model that ignores ctx
// still cannot hold the task past the deadline.
func complete(ctx context.Context, m Model, system, user string) (string, error) {
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := m.Complete(ctx, system, user)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

func (p *Parser) logger() *slog.Logger {
	var l *slog.Logger
	if p != nil {
		l = p.Logger
	}
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return l.With("component", "task")
}

// oneLine makes a reason one plain line: its first non-blank line, cut
// to 200 characters.
func oneLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 200 {
				line = string(r[:199]) + "…"
			}
			return line
		}
	}
	return "no message"
}
