package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// script is a fake Model that answers the message found in ralph's prompt
// with a canned model reply, and records every prompt it is sent.
type script struct {
	mu      sync.Mutex
	replies map[string]string // message → model output
	prompts []prompt
}

type prompt struct{ system, user string }

func (s *script) model() Model {
	return ModelFunc(func(ctx context.Context, system, user string) (string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.prompts = append(s.prompts, prompt{system, user})
		for msg, reply := range s.replies {
			if strings.Contains(user, "<<<MESSAGE\n"+msg+"\nMESSAGE>>>") {
				return reply, nil
			}
		}
		return "", errors.New("script: no reply for this message")
	})
}

const vibrantMessage = "refine ad copy! less generic, more adult, less monster energy.\ntwo moods not working. add 2 more drinks for nighttime."

// vibrantReply is how a model might answer the VIBRANT ENERGY message:
// with prose around a fenced object.
const vibrantReply = "Here is the structured task:\n\n```json\n" + `{
  "type": "mutation",
  "title": "Refine VIBRANT ENERGY landing page",
  "requirements": [
    {"marker": "MODIFY", "text": "Refine ad copy in hero and CTA sections: less generic, more adult, less Monster Energy"},
    {"marker": "FIX", "text": "Theme toggle: two moods (voltage/chrome) not switching correctly"},
    {"marker": "ADD", "text": "2 new nighttime/rest drink flavors (add to existing 8, total → 10)"},
    {"marker": "MODIFY", "text": "Second theme mood: adjust to nighttime aesthetic for new drinks"}
  ],
  "preserve": ["All 8 existing energy drink flavors unchanged", "Store page structure and content", "Navigation and routing"],
  "affected_files": ["HeroSection.tsx", "CTASection.tsx", "FlavorGrid.tsx", "index.css", "ThemeToggle.tsx"],
  "question": ""
}` + "\n```\nLet me know if {anything} should change."

func vibrantInput() Input {
	return Input{
		Message:         vibrantMessage,
		PlanExists:      true,
		PreviousSummary: "Built the VIBRANT ENERGY landing page with 8 flavours and a voltage/chrome theme toggle.",
		Files:           []string{"src/HeroSection.tsx", "src/CTASection.tsx", "src/FlavorGrid.tsx", "src/index.css", "src/ThemeToggle.tsx"},
		Counter:         3,
		Previous:        "task-2-post",
	}
}

// Seed 002 Phase 2: the classification tests, through the model path.
func TestParserClassifiesThroughModel(t *testing.T) {
	s := &script{replies: map[string]string{
		"build me a dashboard": `{"type":"fresh","title":"Dashboard","requirements":[{"marker":"ADD","text":"A dashboard"}],"preserve":[],"affected_files":[]}`,
		"fix the theme toggle": `{"type":"bugfix","title":"Fix theme toggle","requirements":[{"marker":"FIX","text":"Theme toggle does not switch moods"}],"preserve":["Both moods' colours"],"affected_files":["ThemeToggle.tsx"]}`,
		"add 2 more drinks":    `{"type":"mutation","title":"Two more drinks","requirements":[{"marker":"ADD","text":"2 new drinks (keep the existing 8, total 10)"}],"preserve":["The 8 existing drinks"],"affected_files":["FlavorGrid.tsx"]}`,
		"make the drinks more nighttime": `{"type":"needs-clarification","title":"Nighttime drinks","requirements":[],` +
			`"question":"Should I add new nighttime drinks, or restyle some of the existing 8 as nighttime drinks?"}`,
	}}
	p := &Parser{Model: s.model()}

	for _, tc := range []struct {
		msg   string
		plan  bool
		want  Type
		lines []string // in the written task.md
	}{
		{"build me a dashboard", false, Fresh, []string{"Type: fresh\n", "- [ADD] A dashboard\n"}},
		{"fix the theme toggle", true, Bugfix, []string{"Type: bugfix\n", "- [FIX] Theme toggle does not switch moods\n", "- AFFECTED FILES: ThemeToggle.tsx\n"}},
		{"add 2 more drinks", true, Mutation, []string{"Type: mutation\n", "- [ADD] 2 new drinks (keep the existing 8, total 10)\n", "- PRESERVE: The 8 existing drinks\n"}},
		{"make the drinks more nighttime", true, NeedsClarification, []string{
			"Type: needs-clarification\n",
			"## Question\n> Should I add new nighttime drinks, or restyle some of the existing 8 as nighttime drinks?\n",
		}},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			got, opt, err := p.Parse(t.Context(), Input{Message: tc.msg, PlanExists: tc.plan, Counter: 2, Previous: "task-1-post"})
			if err != nil {
				t.Fatal(err)
			}
			if opt != (Option{Method: OptionA}) {
				t.Fatalf("option = %v, want A", opt)
			}
			if got.Type != tc.want || got.Original != tc.msg || got.Counter != 2 || got.Previous != "task-1-post" {
				t.Errorf("task = %+v, want type %q with the message, counter and previous snapshot", got, tc.want)
			}
			md := string(Format(got))
			for _, l := range append(tc.lines, "## Original Message\n> "+tc.msg+"\n") {
				if !strings.Contains(md, l) {
					t.Errorf("task.md lacks %q:\n%s", l, md)
				}
			}
			back, err := Parse([]byte(md))
			if err != nil || !cmp.Equal(back, got) {
				t.Errorf("Parse(task.md) = %+v, %v; want %+v", back, err, got)
			}
		})
	}
}

func TestParserVibrantEnergy(t *testing.T) {
	s := &script{replies: map[string]string{vibrantMessage: vibrantReply}}
	p := &Parser{Model: s.model()}

	got, opt, err := p.Parse(t.Context(), vibrantInput())
	if err != nil || opt.Method != OptionA {
		t.Fatalf("Parse = %v, %v; want Option A", opt, err)
	}
	if !cmp.Equal(got, vibrant()) {
		t.Errorf("task = %#v\nwant the seed's %#v", got, vibrant())
	}
	var kinds []Kind
	for _, r := range got.Requirements {
		kinds = append(kinds, r.Kind)
	}
	if want := []Kind{Modify, Fix, Add, Modify}; !cmp.Equal(kinds, want) {
		t.Errorf("markers = %v, want %v", kinds, want)
	}

	md := string(Format(got))
	for _, want := range []string{
		"# Task: Refine VIBRANT ENERGY landing page\nType: mutation\nPrevious: task-2-post\nCounter: 3\n",
		"- [MODIFY] Refine ad copy in hero and CTA sections",
		"- [FIX] Theme toggle: two moods",
		"- [ADD] 2 new nighttime/rest drink flavors (add to existing 8, total → 10)\n",
		"- [MODIFY] Second theme mood",
		"- PRESERVE: All 8 existing energy drink flavors unchanged\n",
		"- AFFECTED FILES: HeroSection.tsx, CTASection.tsx, FlavorGrid.tsx, index.css, ThemeToggle.tsx\n",
		"## Original Message\n> refine ad copy! less generic, more adult, less monster energy.\n> two moods not working. add 2 more drinks for nighttime.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("task.md lacks %q:\n%s", want, md)
		}
	}
}

func TestParserPrompt(t *testing.T) {
	s := &script{replies: map[string]string{vibrantMessage: vibrantReply}}
	p := &Parser{Model: s.model()}
	in := vibrantInput()
	for i := range 250 {
		in.Files = append(in.Files, fmt.Sprintf("src/gen/file%03d.ts", i))
	}
	if _, _, err := p.Parse(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	if len(s.prompts) != 1 {
		t.Fatalf("model called %d times, want once", len(s.prompts))
	}
	sys, user := s.prompts[0].system, s.prompts[0].user

	for _, want := range []string{
		"<<<MESSAGE\n" + vibrantMessage + "\nMESSAGE>>>",
		"Existing plan (.ralph/plan.tsx): exists\n",
		"Previous task summary:\nBuilt the VIBRANT ENERGY landing page",
		"Project files (first 200 of 255):\n- src/HeroSection.tsx\n- src/CTASection.tsx\n",
		"- src/gen/file194.ts\n- … and 55 more\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "file195.ts") {
		t.Errorf("user prompt lists more than %d files", MaxPromptFiles)
	}
	for _, want := range []string{
		"ADD creates new things. It never converts",
		"MODIFY changes existing things. Always say what stays the same.",
		"FIX repairs a broken behaviour. Name the specific behaviour",
		"REMOVE deletes things. Use it only when the developer explicitly asks",
		`"needs-clarification"`,
		"Output ONLY one JSON object",
		Schema,
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}

	in = Input{Message: "build me a dashboard"}
	if _, _, err := p.Parse(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	user = s.prompts[1].user
	for _, want := range []string{"does not exist\n", "Previous task summary: none\n", "Project files: none\n"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt for an empty project lacks %q:\n%s", want, user)
		}
	}
}

func TestParserFallsBackToTemplate(t *testing.T) {
	reply := func(out string) Model {
		return ModelFunc(func(context.Context, string, string) (string, error) { return out, nil })
	}
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })

	for _, tc := range []struct {
		name   string
		model  Model
		reason string // exact, or a prefix ending in ": "
	}{
		{"no model", nil, ReasonNoModel},
		{"model error", ModelFunc(func(context.Context, string, string) (string, error) {
			return "", errors.New("429 rate limited")
		}), "model error: 429 rate limited"},
		{"timeout", ModelFunc(func(ctx context.Context, _, _ string) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}), ReasonTimeout},
		{"model ignores ctx", ModelFunc(func(context.Context, string, string) (string, error) {
			<-stuck
			return "", nil
		}), ReasonTimeout},
		{"prose only", reply("Sorry, I can't help with that."), "invalid JSON: no JSON object in model output"},
		{"unterminated", reply(`{"type": "fresh", "title": "x"`), "invalid JSON: unterminated JSON object in model output"},
		{"not json", reply("{type: fresh}"), "invalid JSON: invalid character 't'"},
		{"missing type", reply(`{"title":"x","requirements":[]}`), "schema: missing field type"},
		{"bad type", reply(`{"type":"refactor","title":"x","requirements":[]}`), `schema: type: "refactor" is not one of fresh, mutation, bugfix, needs-clarification`},
		{"empty title", reply(`{"type":"fresh","title":" ","requirements":[]}`), "schema: title: must not be empty"},
		{"bad marker", reply(`{"type":"fresh","title":"x","requirements":[{"marker":"CHANGE","text":"y"}]}`), `schema: requirements[0].marker: "CHANGE" is not one of ADD, MODIFY, FIX, REMOVE`},
		{"no question", reply(`{"type":"needs-clarification","title":"x","requirements":[]}`), "schema: missing field question (required when type is needs-clarification)"},
		{"stray question", reply(`{"type":"fresh","title":"x","requirements":[],"question":"why?"}`), "schema: question: must be empty unless type is needs-clarification"},
		{"unknown field", reply(`{"type":"fresh","title":"x","requirements":[],"notes":"hi"}`), "schema: unknown field notes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			p := &Parser{Model: tc.model, Timeout: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			in := vibrantInput()
			got, opt, err := p.Parse(t.Context(), in)
			if err != nil {
				t.Fatalf("Parse error = %v; a parse failure must not block the task", err)
			}
			if opt.Method != OptionB || !strings.HasPrefix(opt.Reason, tc.reason) {
				t.Errorf("option = %v, want B (%s)", opt, tc.reason)
			}
			want := Template(in.Message, in.Counter, in.Previous)
			want.Likely = Mutation
			if !cmp.Equal(got, want) {
				t.Errorf("task = %#v\nwant the template %#v", got, want)
			}
			if got.Route() != Mutation {
				t.Errorf("Route() = %q, want the local classification %q", got.Route(), Mutation)
			}
			if back, err := Parse(Format(got)); err != nil || !cmp.Equal(back, got) {
				t.Errorf("template does not round-trip: %v", err)
			}
			level := "level=WARN"
			if tc.model == nil {
				level = "level=INFO"
			}
			if !strings.Contains(logs.String(), level) || !strings.Contains(logs.String(), "component=task") {
				t.Errorf("fallback not logged at %s with the component:\n%s", level, logs.String())
			}
		})
	}
}

func TestParserCallerCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := &Parser{Model: ModelFunc(func(ctx context.Context, _, _ string) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})}
	got, opt, err := p.Parse(ctx, Input{Message: "fix the theme toggle", PlanExists: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Parse error = %v, want context.Canceled", err)
	}
	if opt != (Option{Method: OptionB, Reason: ReasonCanceled}) || got.Route() != Bugfix {
		t.Errorf("Parse = %v, %+v; want the template with reason %q", opt, got, ReasonCanceled)
	}
}

// The sanity net: there is no plan to mutate when none exists.
func TestParserSanityNet(t *testing.T) {
	p := &Parser{Model: ModelFunc(func(context.Context, string, string) (string, error) {
		return `{"type":"mutation","title":"Drinks","requirements":[{"marker":"ADD","text":"2 drinks"}]}`, nil
	})}
	got, opt, err := p.Parse(t.Context(), Input{Message: "add 2 more drinks"})
	if err != nil || opt.Method != OptionA {
		t.Fatalf("Parse = %v, %v", opt, err)
	}
	if got.Type != Fresh {
		t.Errorf("type = %q, want fresh: a mutation needs an existing plan", got.Type)
	}
	if got.Previous != "none" {
		t.Errorf("previous = %q, want none", got.Previous)
	}
}

func TestNilParser(t *testing.T) {
	var p *Parser
	got, opt, err := p.Parse(t.Context(), Input{Message: "build me a dashboard"})
	if err != nil || opt.Reason != ReasonNoModel || got.Route() != Fresh {
		t.Errorf("nil Parser: %+v, %v, %v; want the template, no model", got, opt, err)
	}
}

func TestOptionString(t *testing.T) {
	if s := (Option{Method: OptionA}).String(); s != "split into requirements by the model" {
		t.Errorf("String() = %q", s)
	}
	if s := (Option{Method: OptionB, Reason: ReasonTimeout}).String(); s != "written from the template (timeout)" {
		t.Errorf("String() = %q", s)
	}
}
