package agent

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// limitPattern matches the wording providers and agent CLIs use for rate
// and usage limits.
var limitPattern = regexp.MustCompile(`(?i)\b(429|529)\b|rate[ _-]?limit|usage limit|too many requests|overloaded|quota exceeded|exceeded your (current )?quota|hit your (usage )?limit|limit reached|resets? at\b|exhausted (your|the) (\w+ )?quota|resource[ _](has been )?exhausted`)

// IsRateLimit reports whether msg, an error message from an agent or its
// provider, says a rate or usage limit was hit (HTTP 429 or 529, "rate
// limit", "usage limit reached … resets at …", "too many requests",
// "overloaded", an exceeded or exhausted quota, Google's
// RESOURCE_EXHAUSTED). Use it on error text only, never on
// the agent's ordinary output.
func IsRateLimit(msg string) bool { return limitPattern.MatchString(msg) }

// quotaPattern matches the wording of a limit that will not lift by
// retrying soon: a used-up quota, plan or usage limit.
var quotaPattern = regexp.MustCompile(`(?i)quota|usage limit|hit your (usage )?limit|insufficient[ _]quota|billing|credits?\b.*(exhausted|used up|run out)|out of credits`)

// IsQuota reports whether msg, a rate-limit message, says a quota or
// usage limit ran out (as opposed to a brief rate limit): "You exceeded
// your current quota", "You have exhausted your daily quota", "usage limit
// reached".
func IsQuota(msg string) bool { return quotaPattern.MatchString(msg) }

// RateLimitFrom returns a *RateLimitError for msg when msg reports a limit,
// with ResetAt parsed from it when it says when the limit lifts; nil
// otherwise.
func RateLimitFrom(msg string, now time.Time) *RateLimitError {
	if !IsRateLimit(msg) {
		return nil
	}
	e := &RateLimitError{Message: strings.TrimSpace(msg)}
	if t, ok := ParseResetTime(msg, now); ok {
		e.ResetAt = t
	}
	return e
}

var (
	// "…usage limit reached|1735689600" (Claude Code), or any ten-digit
	// unix time after a bar or "reset(s) at".
	unixPattern = regexp.MustCompile(`(?i)(?:\||resets?(?: at)?:?\s*)(\d{10})(?:\d{3})?\b`)
	// An RFC 3339 time.
	isoPattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`)
	// "resets at 3pm", "resets 3:30 PM (Europe/London)", "try again at 15:00".
	clockPattern = regexp.MustCompile(`(?i)(?:resets?|reset|again|available|until)\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?`)
	// "retry after 30 seconds", "retry-after: 30", "try again in 5m30s",
	// "resets in 2 hours 5 minutes", "in 1.5s".
	afterPattern = regexp.MustCompile(`(?i)(?:retry[- ]after:?|try again in|resets? in|reset in|wait)\s+((?:\d+(?:\.\d+)?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)?[\s,]*(?:and\s+)?)+)`)
	unitPattern  = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)?`)
)

// ParseResetTime finds when a limit lifts in msg, relative to now. It
// understands a unix timestamp after a bar ("limit reached|1735689600"), an
// RFC 3339 time, a clock time ("resets at 3pm", "resets 3:30 PM
// (Europe/London)", "try again at 15:00" — the next such time after now, in
// the named zone or now's), and a delay ("retry after 30 seconds",
// "retry-after: 30", "try again in 5m30s", "resets in 2 hours 5 minutes").
func ParseResetTime(msg string, now time.Time) (time.Time, bool) {
	if m := unixPattern.FindStringSubmatch(msg); m != nil {
		sec, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil {
			return time.Unix(sec, 0).In(now.Location()), true
		}
	}
	if m := isoPattern.FindString(msg); m != "" {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
			if t, err := time.ParseInLocation(layout, m, now.Location()); err == nil {
				return t, true
			}
		}
	}
	if m := afterPattern.FindStringSubmatch(msg); m != nil {
		if d, ok := parseDelay(m[1]); ok {
			return now.Add(d), true
		}
	}
	if m := clockPattern.FindStringSubmatch(msg); m != nil {
		if t, ok := nextClock(m, now); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseDelay(s string) (time.Duration, bool) {
	var total time.Duration
	found := false
	for _, m := range unitPattern.FindAllStringSubmatch(s, -1) {
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		unit := time.Second
		switch u := strings.ToLower(m[2]); {
		case u == "ms" || strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case u == "m" || strings.HasPrefix(u, "min"):
			unit = time.Minute
		case u == "h" || strings.HasPrefix(u, "h"):
			unit = time.Hour
		case u == "d" || strings.HasPrefix(u, "day"):
			unit = 24 * time.Hour
		}
		total += time.Duration(n * float64(unit))
		found = true
	}
	return total, found && total >= 0
}

func nextClock(m []string, now time.Time) (time.Time, bool) {
	hour, _ := strconv.Atoi(m[1])
	minute := 0
	if m[2] != "" {
		minute, _ = strconv.Atoi(m[2])
	}
	ampm := strings.ToLower(strings.ReplaceAll(m[3], ".", ""))
	if m[2] == "" && ampm == "" {
		return time.Time{}, false // a bare number is not a clock time
	}
	switch ampm {
	case "am":
		if hour == 12 {
			hour = 0
		}
	case "pm":
		if hour < 12 {
			hour += 12
		}
	}
	if hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	loc := now.Location()
	if m[4] != "" {
		if l, err := time.LoadLocation(m[4]); err == nil {
			loc = l
		}
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
	if !t.After(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t.In(now.Location()), true
}
