package engine

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/ralph-harness/ralph/internal/workspace"
)

//go:embed prompts/*.md
var promptFS embed.FS

// PromptData is what the prompt templates see. Templates in
// .ralph/prompts/system.md and .ralph/prompts/user.md replace the
// embedded ones.
type PromptData struct {
	Iteration   int
	Phase       string
	Step        string
	Task        string
	Plan        string
	Feedback    string
	History     string
	Promise     string
	Persona     string
	Constraints []string
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
	t, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
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
		Plan:      read(workspace.Plan),
		Feedback:  read(workspace.Feedback),
		History:   read(workspace.TaskHistory),
		Promise:   e.opt.Promise,
	}
}
