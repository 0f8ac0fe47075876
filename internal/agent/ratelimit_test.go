package agent

import (
	"testing"
	"time"
)

func TestParseResetTime(t *testing.T) {
	now := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Skip("no time zone database")
	}
	tests := []struct {
		msg  string
		want time.Time // zero: not found
	}{
		{"Claude AI usage limit reached|1735689600", time.Unix(1735689600, 0)},
		{"usage limit reached, resets at 1735689600000", time.Unix(1735689600, 0)},
		{"5-hour limit reached ∙ resets 3pm", time.Date(2025, 6, 1, 15, 0, 0, 0, time.UTC)},
		{"You've hit your limit · resets at 3:30 PM", time.Date(2025, 6, 1, 15, 30, 0, 0, time.UTC)},
		{"usage limit reached, resets at 9am", time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)},
		{"limit reached · resets 12am", time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)},
		{"limit reached · resets 12pm", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)},
		{"You've hit your limit · resets 7pm (Europe/London)", time.Date(2025, 6, 1, 19, 0, 0, 0, london)},
		{"rate limited, try again at 15:00", time.Date(2025, 6, 1, 15, 0, 0, 0, time.UTC)},
		{"rate limit exceeded; retry after 30 seconds", now.Add(30 * time.Second)},
		{"429 Too Many Requests (retry-after: 30)", now.Add(30 * time.Second)},
		{"Rate limit reached for gpt-5. Please try again in 1.5s.", now.Add(1500 * time.Millisecond)},
		{"Please try again in 20ms.", now.Add(20 * time.Millisecond)},
		{"You've hit your usage limit. Try again in 5m30s.", now.Add(5*time.Minute + 30*time.Second)},
		{"usage limit; resets in 2 hours 5 minutes", now.Add(2*time.Hour + 5*time.Minute)},
		{"try again in 3 days 2 hours", now.Add(3*24*time.Hour + 2*time.Hour)},
		{"quota exceeded until 2025-06-01T12:00:00Z", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)},
		{"resets at 2025-06-02T08:00:00+02:00", time.Date(2025, 6, 2, 6, 0, 0, 0, time.UTC)},
		{"429 Too Many Requests", time.Time{}},
		{"rate limit, resets at 25", time.Time{}},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		got, ok := ParseResetTime(tt.msg, now)
		if ok != !tt.want.IsZero() || ok && !got.Equal(tt.want) {
			t.Errorf("ParseResetTime(%q) = %v, %v; want %v", tt.msg, got, ok, tt.want)
		}
	}
}

func TestIsRateLimit(t *testing.T) {
	for msg, want := range map[string]bool{
		"API Error: 429 {\"type\":\"rate_limit_error\"}":                  true,
		"API Error: 529 Overloaded":                                       true,
		"Claude AI usage limit reached|1735689600":                        true,
		"exceeded retry limit, last status: 429 Too Many Requests":        true,
		"You've hit your usage limit. Try again in 5m.":                   true,
		"Quota exceeded for quota metric":                                 true,
		"[API Error: You have exhausted your daily quota on this model.]": true,
		"Resource has been exhausted (e.g. check quota).":                 true,
		"status: RESOURCE_EXHAUSTED":                                      true,
		"authentication failed: invalid x-api-key":                        false,
		"the file has 4290 lines":                                         false,
		"":                                                                false,
	} {
		if got := IsRateLimit(msg); got != want {
			t.Errorf("IsRateLimit(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestRateLimitFrom(t *testing.T) {
	now := time.Unix(1000, 0)
	if e := RateLimitFrom("boom", now); e != nil {
		t.Errorf("RateLimitFrom(boom) = %v, want nil", e)
	}
	e := RateLimitFrom("429: retry after 10 seconds", now)
	if e == nil || !e.ResetAt.Equal(now.Add(10*time.Second)) {
		t.Errorf("RateLimitFrom = %+v", e)
	}
}

func TestIsQuota(t *testing.T) {
	for msg, want := range map[string]bool{
		"You exceeded your current quota, please check your plan and billing details.": true,
		"[API Error: You have exhausted your daily quota on this model.]":              true,
		"Claude AI usage limit reached|1735689600":                                     true,
		"insufficient_quota": true,
		"Rate limit reached for gpt-5.5. Please try again in 30s.": false,
		"API Error: 529 Overloaded":                                false,
		"429 Too Many Requests":                                    false,
	} {
		if got := IsQuota(msg); got != want {
			t.Errorf("IsQuota(%q) = %v, want %v", msg, got, want)
		}
	}
}
