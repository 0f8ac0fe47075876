package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-harness/ralph/internal/task"
)

//go:embed cases.json
var casesJSON []byte

// Case is one task message with what a good parse of it holds.
type Case struct {
	Message string `json:"message"`
	// Plan says whether .ralph/plan.tsx exists when the message arrives.
	Plan bool `json:"plan,omitempty"`
	// Type is the expected task type.
	Type task.Type `json:"type"`
	// Requirements are the expected requirements: each must be matched by
	// one of the parse's requirements with the same marker whose text
	// holds every keyword (case-insensitive).
	Requirements []Expected `json:"requirements"`
}

// Expected is one requirement a parse should find.
type Expected struct {
	Marker   task.Kind `json:"marker"`
	Keywords []string  `json:"keywords"`
}

// Cases returns the evaluation set.
func Cases() ([]Case, error) {
	var cs []Case
	if err := json.Unmarshal(casesJSON, &cs); err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	return cs, nil
}

// Score is the outcome of an evaluation.
type Score struct {
	Cases, TypesRight int
	Expected, Found   int
	Fallbacks         int
	Misses            []string // one line per wrong type or missed requirement
}

// TypeAccuracy is the share of cases typed as expected.
func (s Score) TypeAccuracy() float64 { return ratio(s.TypesRight, s.Cases) }

// RequirementRecall is the share of expected requirements found.
func (s Score) RequirementRecall() float64 { return ratio(s.Found, s.Expected) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Evaluate parses every case with p, one after another, and scores the
// results. A parse that falls back to the template counts as wrong on
// both figures.
func Evaluate(ctx context.Context, p *task.Parser, cases []Case) (Score, error) {
	var s Score
	for i, c := range cases {
		in := task.Input{Message: c.Message, PlanExists: c.Plan, Counter: 2, Previous: "task-1-post"}
		if c.Plan {
			in.Files = []string{".ralph/plan.tsx", "src/App.tsx", "src/sections/HeroSection.tsx"}
		}
		t, opt, err := p.Parse(ctx, in)
		if err != nil {
			return s, fmt.Errorf("case %d: %w", i+1, err)
		}
		s.Cases++
		if opt.Method != task.OptionA {
			s.Fallbacks++
			s.Misses = append(s.Misses, fmt.Sprintf("case %d: %s", i+1, opt))
		}
		if t.Type == c.Type {
			s.TypesRight++
		} else {
			s.Misses = append(s.Misses, fmt.Sprintf("case %d: type %s, want %s: %q", i+1, t.Type, c.Type, c.Message))
		}
		used := make([]bool, len(t.Requirements))
		for _, e := range c.Requirements {
			s.Expected++
			if j := match(e, t.Requirements, used); j >= 0 {
				used[j] = true
				s.Found++
				continue
			}
			s.Misses = append(s.Misses, fmt.Sprintf("case %d: no [%s] with %q: %q", i+1, e.Marker, strings.Join(e.Keywords, " "), c.Message))
		}
	}
	return s, nil
}

// Classified scores the local classifier (task.Classify), the guess a
// template records when no model splits the task: type accuracy only, as
// it finds no requirements.
func Classified(cases []Case) Score {
	var s Score
	for i, c := range cases {
		s.Cases++
		s.Expected += len(c.Requirements)
		if got := task.Classify(c.Message, c.Plan); got == c.Type {
			s.TypesRight++
		} else {
			s.Misses = append(s.Misses, fmt.Sprintf("case %d: type %s, want %s: %q", i+1, got, c.Type, c.Message))
		}
	}
	return s
}

// match returns the index of the first unused requirement that e
// matches, or -1.
func match(e Expected, rs []task.Requirement, used []bool) int {
	for j, r := range rs {
		if used[j] || r.Kind != e.Marker {
			continue
		}
		text := strings.ToLower(r.Text)
		ok := true
		for _, k := range e.Keywords {
			if !strings.Contains(text, strings.ToLower(k)) {
				ok = false
			}
		}
		if ok {
			return j
		}
	}
	return -1
}

// Print writes the two figures, with the seed's targets, and the misses.
func (s Score) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "task parse: %d cases, %d fell back to the template\n", s.Cases, s.Fallbacks)
	fmt.Fprintf(w, "type accuracy:      %5.1f%% (%d/%d; seed 002 target > 90%%)\n", 100*s.TypeAccuracy(), s.TypesRight, s.Cases)
	fmt.Fprintf(w, "requirement recall: %5.1f%% (%d/%d; seed 002 target > 80%%)\n", 100*s.RequirementRecall(), s.Found, s.Expected)
	if verbose {
		for _, m := range s.Misses {
			fmt.Fprintln(w, "  "+m)
		}
	}
}
