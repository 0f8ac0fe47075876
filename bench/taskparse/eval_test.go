package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/api"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// The evaluation set holds at least 40 messages of every type, each with
// an expected requirement list.
func TestCases(t *testing.T) {
	cs, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	types := map[task.Type]int{}
	for i, c := range cs {
		types[c.Type]++
		if len(c.Requirements) == 0 || strings.TrimSpace(c.Message) == "" {
			t.Errorf("case %d has no message or no requirements", i+1)
		}
		if c.Type == task.Mutation && !c.Plan {
			t.Errorf("case %d: a mutation needs a plan to mutate", i+1)
		}
	}
	if len(cs) < 40 || types[task.Fresh] == 0 || types[task.Mutation] == 0 || types[task.Bugfix] == 0 {
		t.Errorf("%d cases, types %v; want at least 40 of all three types", len(cs), types)
	}
}

// The evaluation runs against the fake OpenAI-compatible server, which
// answers every case in turn: right for most, with the wrong type and no
// requirements for every fourth, and with no JSON at all for the first.
// The figures are whatever that scores; the test checks the scoring and
// prints them.
func TestEvaluateFakeModel(t *testing.T) {
	cs, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	var turns []testutil.Turn
	wantTypes, wantFound, expected := 0, 0, 0
	for i, c := range cs {
		expected += len(c.Requirements)
		if i == 0 {
			turns = append(turns, testutil.Text("I would call this a fresh task."))
			continue
		}
		a := map[string]any{"type": c.Type, "title": fmt.Sprintf("case %d", i+1), "requirements": []map[string]string{}}
		if i%4 == 3 {
			a["type"] = task.Bugfix
			if c.Type == task.Bugfix {
				a["type"] = task.Fresh
			}
		} else {
			var rs []map[string]string
			for _, e := range c.Requirements {
				rs = append(rs, map[string]string{"marker": string(e.Marker), "text": "the " + strings.Join(e.Keywords, " ") + " part"})
			}
			a["requirements"] = rs
			wantTypes++
			wantFound += len(c.Requirements)
		}
		b, _ := json.Marshal(a)
		turns = append(turns, testutil.Text(string(b)))
	}
	srv := testutil.NewChat(t, turns...)
	srv.AnswerAll = true
	t.Setenv("RALPH_TEST_TASKPARSE_KEY", "sk-test")
	logger := slog.New(slog.DiscardHandler)
	m, err := api.NewModel(api.Config{Provider: "openai", BaseURL: srv.BaseURL(), APIKeyEnv: "RALPH_TEST_TASKPARSE_KEY"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Evaluate(context.Background(), &task.Parser{Model: m, Logger: logger}, cs)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cases != len(cs) || s.TypesRight != wantTypes || s.Found != wantFound || s.Expected != expected || s.Fallbacks != 1 {
		t.Errorf("score %+v; want %d cases, %d types right, %d of %d requirements, 1 fallback", s, len(cs), wantTypes, wantFound, expected)
	}
	var out bytes.Buffer
	s.Print(&out, false)
	t.Log("\n" + out.String())
	fmt.Print(out.String())
	for _, want := range []string{"type accuracy:", "requirement recall:", fmt.Sprintf("(%d/%d;", wantTypes, len(cs))} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// The local classifier's figures, for comparison: its type accuracy on the
// set, and no requirements at all.
func TestClassified(t *testing.T) {
	cs, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	s := Classified(cs)
	if s.Cases != len(cs) || s.Found != 0 || s.TypesRight == 0 {
		t.Errorf("score %+v", s)
	}
	var out bytes.Buffer
	s.Print(&out, false)
	t.Log("\n" + out.String())
}
