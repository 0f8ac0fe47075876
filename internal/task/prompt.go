package task

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxPromptFiles caps the project file list shown to the model.
const MaxPromptFiles = 200

// maxSummaryBytes caps the previous task's summary in the prompt.
const maxSummaryBytes = 4000

// systemPrompt is ralph's instruction for the Option A model call.
func systemPrompt() string {
	return `You are the task intake step of ralph, a harness that runs an autonomous coding agent.
Turn the developer's message into a structured task the agent can work through as a checklist.
You do not write code and you do not talk to the developer, except through "question".

Decide the task type:
- "fresh": there is no plan yet, or the developer asks to start over or to build something new from nothing.
- "mutation": a plan exists and the message changes, extends or removes things in the existing project.
- "bugfix": the message names a specific broken behaviour and asks for nothing structural.
- "needs-clarification": you cannot tell what should change, or whether something should be added or converted. Put one short question for the developer in "question".

Split the message into requirements, one per concern, each with a marker:
- ADD creates new things. It never converts, renames or repurposes existing things. Say how many, and what the total becomes when the message implies one (for example "2 new flavours, keeping the existing 8: 10 in total").
- MODIFY changes existing things. Always say what stays the same.
- FIX repairs a broken behaviour. Name the specific behaviour that is broken.
- REMOVE deletes things. Use it only when the developer explicitly asks for a deletion; never infer it.
Cover every concern in the message; do not drop any, however small.

List under "preserve" what must survive unchanged (existing items, pages, content the message does not mention), and under "affected_files" the files from the project file list the task will most likely touch.

Output ONLY one JSON object, no prose and no code fence, with exactly these keys:
{"type": "fresh|mutation|bugfix|needs-clarification", "title": "short task name", "requirements": [{"marker": "ADD|MODIFY|FIX|REMOVE", "text": "..."}], "preserve": ["..."], "affected_files": ["..."], "question": "only for needs-clarification, otherwise empty"}

The JSON Schema of the object:
` + Schema
}

// userPrompt describes the message and the project state for the model.
func userPrompt(in Input) string {
	var b strings.Builder
	b.WriteString("Developer's message (verbatim, between the markers):\n<<<MESSAGE\n")
	b.WriteString(in.Message)
	b.WriteString("\nMESSAGE>>>\n\n")

	if in.PlanExists {
		b.WriteString("Existing plan (.ralph/plan.tsx): exists\n")
	} else {
		b.WriteString("Existing plan (.ralph/plan.tsx): does not exist\n")
	}

	summary := strings.TrimSpace(in.PreviousSummary)
	if summary == "" {
		b.WriteString("Previous task summary: none\n")
	} else {
		b.WriteString("Previous task summary:\n")
		b.WriteString(truncate(summary, maxSummaryBytes))
		b.WriteString("\n")
	}

	switch n := len(in.Files); {
	case n == 0:
		b.WriteString("Project files: none\n")
	case n <= MaxPromptFiles:
		fmt.Fprintf(&b, "Project files (%d):\n", n)
	default:
		fmt.Fprintf(&b, "Project files (first %d of %d):\n", MaxPromptFiles, n)
	}
	for i, f := range in.Files {
		if i == MaxPromptFiles {
			fmt.Fprintf(&b, "- … and %d more\n", len(in.Files)-MaxPromptFiles)
			break
		}
		b.WriteString("- ")
		b.WriteString(f)
		b.WriteString("\n")
	}
	return b.String()
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …(truncated)"
}
