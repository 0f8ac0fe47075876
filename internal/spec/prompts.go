package spec

import (
	"bytes"
	"embed"
	"fmt"
	"text/template"
)

//go:embed prompts/*.md
var promptFS embed.FS

// prompts holds the embedded templates: <role>_system.md and <role>.md
// for each role, and paths.md, shared by the three user prompts.
var prompts = template.Must(template.New("").ParseFS(promptFS, "prompts/*.md"))

// Role is one of the pipeline's three agents.
type Role string

// Roles.
const (
	Planner     Role = "planner"
	Implementer Role = "implementer"
	Verifier    Role = "verifier"
)

// promptData is what the templates see.
type promptData struct {
	SpecRel, SpecID, SpecText string
	Root, Home                string
	SpecPath, PlanPath        string
	ScratchpadPath            string
	Scratchpad                string
	// Planner: the invalidated plan and why.
	PrevPlan, Reason string
	// Implementer and verifier: the active plan.
	Plan string
	// Implementer: the previous attempt's number and what was wrong with it.
	Previous int
	Feedback string
	// Implementer: the attempt a kill interrupted, the commits made since
	// the spec's base (one per line) and the changes left uncommitted (git
	// status), which it continues.
	Interrupted      int
	Earlier, Pending string
	// Verifier: the change under review.
	Diff, Base, Commit string
	// Magic phrases.
	Promise, Pass, Fail string
}

// render builds a role's system and user prompts.
func render(role Role, d promptData) (system, user string, err error) {
	var sb, ub bytes.Buffer
	if err := prompts.ExecuteTemplate(&sb, string(role)+"_system.md", d); err != nil {
		return "", "", fmt.Errorf("render %s system prompt: %w", role, err)
	}
	if err := prompts.ExecuteTemplate(&ub, string(role)+".md", d); err != nil {
		return "", "", fmt.Errorf("render %s prompt: %w", role, err)
	}
	return sb.String(), ub.String(), nil
}
