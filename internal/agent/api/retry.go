package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
)

// errKind sorts provider errors by what ralph does about them.
type errKind int

const (
	// errFatal is not retried: authentication, a bad request.
	errFatal errKind = iota
	// errRateLimit is HTTP 429: retried after retry-after, then handed to
	// the engine as a *agent.RateLimitError.
	errRateLimit
	// errOverloaded is HTTP 529 or 503: retried with backoff, then handed
	// to the engine as a *agent.RateLimitError.
	errOverloaded
	// errServer is another 5xx, a broken stream or a network error:
	// retried with backoff, then returned as an error.
	errServer
	// errContext means the prompt does not fit the context window: the
	// oldest tool results are trimmed and the request is sent again.
	errContext
)

// apiError is a provider error, classified.
type apiError struct {
	Kind   errKind
	Status int
	// RetryAfter is the wait the provider asked for; zero when it did not.
	RetryAfter time.Duration
	Err        error
}

func (e *apiError) Error() string { return e.Err.Error() }
func (e *apiError) Unwrap() error { return e.Err }

// kindOf classifies an HTTP status and the error's text.
func kindOf(status int, text string) errKind {
	low := strings.ToLower(text)
	switch {
	case strings.Contains(low, "prompt is too long") || strings.Contains(low, "context_length_exceeded") ||
		strings.Contains(low, "maximum context length") || strings.Contains(low, "context window"):
		return errContext
	case strings.Contains(low, "insufficient_quota"):
		// OpenAI's 429 for an exhausted balance: waiting does not help.
		return errFatal
	case status == http.StatusTooManyRequests || strings.Contains(low, "rate_limit"):
		return errRateLimit
	case status == 529 || status == http.StatusServiceUnavailable || strings.Contains(low, "overloaded"):
		return errOverloaded
	case status >= 500 || status == http.StatusRequestTimeout || status == http.StatusConflict:
		return errServer
	case status == 0:
		// No HTTP status: the connection or the stream broke.
		return errServer
	}
	return errFatal
}

// parseRetryAfter reads a retry-after header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// retryAfterFrom reads the retry-after headers of a response (the
// millisecond variant first), if any.
func retryAfterFrom(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("retry-after-ms")), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return parseRetryAfter(h.Get("retry-after"), now)
}

// errIdle ends a model stream that sent nothing for Request.IdleTimeout.
var errIdle = fmt.Errorf("model stream: %w (%w)", agent.ErrIdle, proc.ErrIdle)

// MaxInlineWait is the longest the agent waits out a rate limit inside an
// iteration. A longer retry-after, or one past the iteration's deadline, is
// returned at once as a *agent.RateLimitError for the engine to wait out
// with its countdown.
const MaxInlineWait = 90 * time.Second

// retrier sends requests with ralph's visible retries.
type retrier struct {
	// max is how many times a request is retried before giving up.
	max int
	// base is the first backoff; each retry doubles it.
	base time.Duration
	// maxInline is the longest ralph waits inside an iteration
	// (MaxInlineWait); a longer wait goes to the engine at once.
	maxInline time.Duration
	now       func() time.Time
}

// backoff is the wait before retry n (0-based).
func (r *retrier) backoff(n int) time.Duration { return r.base << min(n, 16) }

// send sends tr through p until it succeeds, retrying rate limits,
// overloads and server errors, and trimming old tool results when the
// prompt does not fit. Trimming changes tr.Messages for good. used counts
// the retries spent so far; its budget of r.max is shared by all the
// requests of one iteration.
func (r *retrier) send(ctx context.Context, p provider, tr *turnRequest, idle time.Duration, used *int, emit func(agent.Event)) (reply, error) {
	for {
		attempt := *used
		rep, err := sendOnce(ctx, p, *tr, idle)
		if err == nil {
			return rep, nil
		}
		if ctx.Err() != nil {
			return reply{}, ctx.Err()
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			return reply{}, err
		}
		if ae.Kind == errContext {
			n := trimOldest(tr.Messages)
			if n == 0 {
				return reply{}, fmt.Errorf("the prompt does not fit the model's context window, with every tool result already trimmed: %w", err)
			}
			emit(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("the conversation is over the model's context window; trimmed the %d oldest tool results and retrying", n)})
			continue
		}
		if ae.Kind == errFatal {
			return reply{}, err
		}

		wait := ae.RetryAfter
		if wait <= 0 {
			wait = r.backoff(attempt)
		}
		limited := ae.Kind == errRateLimit || ae.Kind == errOverloaded
		deadline, ok := ctx.Deadline()
		pastDeadline := ok && r.now().Add(wait).After(deadline)
		if attempt >= r.max || wait > r.maxInline || pastDeadline {
			// Left to the engine, which waits with a countdown and runs the
			// iteration again.
			if limited {
				return reply{}, &agent.RateLimitError{ResetAt: r.now().Add(wait), Message: limitMessage(ae, attempt)}
			}
			return reply{}, fmt.Errorf("model request failed after %d retries: %w", attempt, err)
		}
		*used++
		ev := agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("%s; retrying in %s (retry %d of %d)", describe(ae), roundWait(wait), *used, r.max)}
		if limited {
			ev.Kind, ev.ResetAt = agent.KindRateLimit, r.now().Add(wait)
		}
		emit(ev)
		if err := sleep(ctx, wait); err != nil {
			return reply{}, err
		}
	}
}

// sendOnce sends one request, ending it when the stream goes idle.
func sendOnce(ctx context.Context, p provider, tr turnRequest, idle time.Duration) (reply, error) {
	if idle <= 0 {
		return p.send(ctx, tr, func() {})
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer timer.Stop()
	rep, err := p.send(sctx, tr, func() { timer.Reset(idle) })
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(sctx), errIdle) {
		return reply{}, errIdle
	}
	return rep, err
}

func describe(ae *apiError) string {
	switch ae.Kind {
	case errRateLimit:
		return "rate limited (HTTP 429)"
	case errOverloaded:
		return fmt.Sprintf("the provider is overloaded (HTTP %d)", ae.Status)
	case errServer:
		if ae.Status == 0 {
			return fmt.Sprintf("the request failed (%v)", ae.Err)
		}
		return fmt.Sprintf("server error (HTTP %d)", ae.Status)
	}
	return ae.Err.Error()
}

func limitMessage(ae *apiError, retries int) string {
	if retries == 0 {
		return describe(ae)
	}
	return fmt.Sprintf("%s, still after %d retries", describe(ae), retries)
}

func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
