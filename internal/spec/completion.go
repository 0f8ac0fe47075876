package spec

import (
	"strings"

	"github.com/ralph-harness/ralph/internal/config"
)

// Phrases are the magic phrases the agents end their final message with.
type Phrases struct {
	// Planner ends a planner's message once the plan is written.
	Planner string
	// Implementer ends an implementer's message once the work is committed.
	Implementer string
	// Pass and Fail end a verifier's message.
	Pass, Fail string
}

// DefaultPhrases returns the phrases of SPEC §11.
func DefaultPhrases() Phrases {
	return Phrases{
		Planner:     config.DefaultPromise,
		Implementer: config.DefaultPromise,
		Pass:        config.DefaultPassPromise,
		Fail:        config.DefaultFailPromise,
	}
}

// PhrasesFrom reads the phrases of a [specs] table.
func PhrasesFrom(c config.Specs) Phrases {
	p := DefaultPhrases()
	for dst, src := range map[*string]string{&p.Planner: c.PlannerPromise, &p.Implementer: c.ImplementerPromise, &p.Pass: c.PassPromise, &p.Fail: c.FailPromise} {
		if strings.TrimSpace(src) != "" {
			*dst = strings.TrimSpace(src)
		}
	}
	return p
}

// LastLine returns the last non-empty line of s, trimmed.
func LastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// Ends reports whether the last non-empty line of final is phrase. A
// phrase anywhere else in the message never counts.
func Ends(final, phrase string) bool {
	return phrase != "" && LastLine(final) == strings.TrimSpace(phrase)
}

// InvalidationMarker starts the line of a verifier's failure report that
// rejects the plan itself.
const InvalidationMarker = "PLAN_INVALIDATION:"

// ParsePlanInvalidation finds the first PLAN_INVALIDATION: line of a
// verifier's report (list bullets and backquotes around it allowed) and
// returns its reason. ok is false when there is none.
func ParsePlanInvalidation(report string) (reason string, ok bool) {
	for _, line := range strings.Split(report, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimLeft(l, "-*> `")
		rest, found := strings.CutPrefix(l, InvalidationMarker)
		if !found {
			continue
		}
		reason = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "`"))
		if reason == "" {
			reason = "no reason given"
		}
		return reason, true
	}
	return "", false
}

// Verdict is what a verifier's final message says.
type Verdict string

// Verdicts.
const (
	VerdictPass       Verdict = "pass"
	VerdictFail       Verdict = "fail"       // re-implement with the report
	VerdictInvalidate Verdict = "invalidate" // archive the plan, re-plan
	VerdictNone       Verdict = "none"       // neither phrase: verify again
)

// Judge reads a verifier's final message. The invalidation reason is set
// for VerdictInvalidate.
func Judge(final string, p Phrases) (v Verdict, reason string) {
	switch {
	case Ends(final, p.Pass):
		return VerdictPass, ""
	case Ends(final, p.Fail):
		if r, ok := ParsePlanInvalidation(final); ok {
			return VerdictInvalidate, r
		}
		return VerdictFail, ""
	}
	return VerdictNone, ""
}
