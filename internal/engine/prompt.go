package engine

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"

	"github.com/ralph-harness/ralph/internal/workspace"
)

//go:embed prompts/*.md
var promptFS embed.FS

// PromptData is what the prompt templates see. Templates in
// .ralph/prompts/system.md and .ralph/prompts/user.md replace the
// embedded ones.
type PromptData struct {
	Iteration int
	Phase     string
	// Step is the name of the orchestration plan's current step, "" when
	// the task is not walking a <Plan>; StepPhase is its phase's name,
	// StepNumber and StepCount say where it stands, StepInstructions is
	// the step's text: the work of this build loop.
	Step             string
	StepPhase        string
	StepNumber       int
	StepCount        int
	StepInstructions string
	Task             string
	Plan             string
	Feedback         string
	History          string
	Promise          string
	// Persona and Constraints belong in the system prompt only: the
	// plan's top-level ones, and the current step's (a step's Persona
	// replaces the plan's, its Constraints are added).
	Persona     string
	Constraints []string
	// PlanUpdate tells the agent of a mutation task how to update the
	// existing plan with change markers (PLAN phase only).
	PlanUpdate string
}

// YouAre renders Persona as a sentence for the system prompt: "Senior
// security engineer" becomes "You are a senior security engineer.";
// text that already reads "You are …" or starts with an article is kept.
func (d PromptData) YouAre() string {
	p := strings.TrimSpace(d.Persona)
	if p == "" {
		return ""
	}
	if !strings.HasSuffix(p, ".") && !strings.HasSuffix(p, "!") && !strings.HasSuffix(p, "?") {
		p += "."
	}
	lower := strings.ToLower(p)
	if strings.HasPrefix(lower, "you are ") || strings.HasPrefix(lower, "you're ") {
		return p
	}
	first, _, _ := strings.Cut(p, " ")
	// Lower-case a capitalised first word ("A", "Senior"), but not an
	// acronym (SRE, QA).
	if first[1:] == strings.ToLower(first[1:]) {
		p = strings.ToLower(p[:1]) + p[1:]
	}
	switch w := strings.ToLower(first); w {
	case "a", "an", "the", "my", "our", "your":
		return "You are " + p
	}
	article := "a "
	if strings.ContainsRune("aeiouAEIOU", rune(p[0])) {
		article = "an "
	}
	return "You are " + article + p
}

// Prompts builds the system and user prompts of one iteration.
func (e *Engine) prompts(d PromptData) (system, user string, err error) {
	system, err = e.render("system.md", d)
	if err != nil {
		return "", "", err
	}
	user, err = e.render("user.md", d)
	return system, user, err
}

func (e *Engine) render(name string, d PromptData) (string, error) {
	src, err := os.ReadFile(filepath.Join(e.ws.StateDir(), "prompts", name))
	origin := ".ralph/prompts/" + name
	if err != nil {
		src, err = promptFS.ReadFile("prompts/" + name)
		origin = "embedded " + name
		if err != nil {
			return "", err
		}
	}
	t, err := parseTemplate(name, string(src))
	if err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// parsed keeps, by template name, the last source parsed and what it
// parsed to: a template is read for every prompt (an edit of
// .ralph/prompts/ counts from the next one) but parsed again only when its
// source changed.
var parsed struct {
	sync.Mutex
	m map[string]parsedTemplate
}

type parsedTemplate struct {
	src string
	t   *template.Template
}

// parseTemplate returns src parsed as the prompt template name.
func parseTemplate(name, src string) (*template.Template, error) {
	parsed.Lock()
	defer parsed.Unlock()
	if p, ok := parsed.m[name]; ok && p.src == src {
		return p.t, nil
	}
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, err
	}
	if parsed.m == nil {
		parsed.m = map[string]parsedTemplate{}
	}
	parsed.m[name] = parsedTemplate{src: src, t: t}
	return t, nil
}

// promptData reads the workspace files a prompt is built from.
func (e *Engine) promptData(iteration int, step string) PromptData {
	read := func(name string) string {
		s, _ := e.ws.Read(name)
		return strings.TrimSpace(s)
	}
	return PromptData{
		Iteration: iteration,
		Phase:     e.ws.Phase(),
		Step:      step,
		Task:      read(workspace.Task),
		Plan:      planForUserPrompt(read(workspace.Plan)),
		Feedback:  read(workspace.Feedback),
		History:   read(workspace.TaskHistory),
		Promise:   e.opt.Promise,
	}
}
