// Package task holds ralph's structured task file, .ralph/task.md, and the
// task parser that turns a raw message into one (SPEC §8, seed 002 §5).
//
// # The task.md format
//
// Format writes and Parse reads this line-oriented layout:
//
//	# Task: Refine VIBRANT ENERGY landing page
//	Type: mutation
//	Previous: task-2-post
//	Counter: 3
//
//	## Requirements
//	- [MODIFY] Refine ad copy in hero and CTA sections
//	- [FIX] Theme toggle: two moods not switching
//	- [ADD] 2 new nighttime drink flavours (keep the existing 8)
//
//	## Scope
//	- PRESERVE: All 8 existing energy drink flavours unchanged
//	- AFFECTED FILES: HeroSection.tsx, FlavorGrid.tsx
//
//	## Question
//	> Asked of the human; only for needs-clarification tasks.
//
//	## Original Message
//	> the raw message, verbatim,
//	> one quoted line per message line
//
// The grammar, one rule per line kind:
//
//	file      = { blank } title { header | blank } { section }
//	title     = "# Task" [ ":" [ " " ] value ]
//	header    = "Type:" type [ " (likely " type ")" ]
//	          | "Previous:" [ " " ] value
//	          | "Counter:" [ " " ] integer
//	section   = "## " name [ " (" note ")" ] { item | blank }
//	name      = "Requirements" | "Scope" | "Question" | "Original Message" | "Raw Message"
//	item      = "- [" marker "]" [ " " value [ check ] ]    (in Requirements)
//	          | "- PRESERVE:" [ " " ] value                (in Scope)
//	          | "- AFFECTED FILES:" [ " " ] file { "," [ " " ] file }
//	          | ">" [ " " ] verbatim                       (in Question and Original Message)
//	marker    = "ADD" | "MODIFY" | "FIX" | "REMOVE" | " "  (case-insensitive)
//	check     = " — check: " json-array-of-strings           (an argv, never a shell string)
//
// A requirement's check is a command of its own that must pass for the
// requirement to count as done; it is run as the argv it is, without a
// shell, and a requirement's text may not contain " — check: [" otherwise.
//
// A value is one line of text in which a backslash escapes a newline (\n), a
// carriage return (\r), a backslash (\\) and, in file lists, a comma (\,);
// any other backslash stands for itself, so hand-written paths such as
// src\app.tsx read as written. Quoted text is verbatim: each line of the
// text is written as "> " plus the line (an empty line as ">"), and nothing
// in it is escaped, so a message may contain "#", ">", blank lines, trailing
// spaces, carriage returns and any Unicode. A blank line may end a quoted
// block but not interrupt it. Headers and sections may come in any order,
// each at most once ("Raw Message", the seed's Option B name, is the
// Original Message section). Notes after section names are ignored by
// Parse; Format writes them to guide the agent when the type is pending. A
// file whose first line ends in CRLF is read as a CRLF file; otherwise a
// carriage return at the end of a quoted line belongs to the text.
//
// Parse(Format(t)) == t for every valid Task (see Validate), treating nil
// and empty slices as equal: Parse returns nil for an empty list.
//
// # The parser
//
// Parser implements the seed's two options. Option A asks a Model for a
// JSON object (see Schema), validates it and builds the Task. Any failure
// falls back to Option B, the Template with the raw message, whose Likely
// field carries the local Classify result so the engine can still route the
// task (see Task.Route). A parse never fails a task; only the caller's own
// context ending is returned as an error.
package task

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Type is the kind of a task, which decides how the engine plans it.
type Type string

// The task types of seed 002 §5.
const (
	// Fresh tasks start a new plan: there is no plan, or the user asked to
	// start over.
	Fresh Type = "fresh"
	// Mutation tasks update the existing plan with change markers.
	Mutation Type = "mutation"
	// Bugfix tasks repair a specific broken behaviour and skip the plan
	// update.
	Bugfix Type = "bugfix"
	// NeedsClarification tasks are ambiguous; the engine asks the human
	// Task.Question before the loop starts.
	NeedsClarification Type = "needs-clarification"
	// Pending is the type of an Option B template: the agent decomposes the
	// message during planning.
	Pending Type = "pending"
)

// Types lists every valid Type in a stable order.
func Types() []Type {
	return []Type{Fresh, Mutation, Bugfix, NeedsClarification, Pending}
}

// Valid reports whether t is one of the known task types.
func (t Type) Valid() bool {
	switch t {
	case Fresh, Mutation, Bugfix, NeedsClarification, Pending:
		return true
	}
	return false
}

// Kind is the marker of a requirement: what the requirement does to the
// project.
type Kind string

// The requirement markers of seed 002 §5, and the open checkbox of the
// Option B template.
const (
	// Add creates new things and never converts existing ones.
	Add Kind = "ADD"
	// Modify changes existing things and says what stays the same.
	Modify Kind = "MODIFY"
	// Fix repairs a named broken behaviour.
	Fix Kind = "FIX"
	// Remove deletes something the user explicitly asked to delete.
	Remove Kind = "REMOVE"
	// Open is an unclassified checklist item, written "- [ ] …", for the
	// agent to fill in.
	Open Kind = ""
)

// Kinds lists every valid Kind in a stable order, Open last.
func Kinds() []Kind {
	return []Kind{Add, Modify, Fix, Remove, Open}
}

// Valid reports whether k is one of the known requirement markers.
func (k Kind) Valid() bool {
	switch k {
	case Add, Modify, Fix, Remove, Open:
		return true
	}
	return false
}

// marker is the text between the brackets of a requirement line.
func (k Kind) marker() string {
	if k == Open {
		return " "
	}
	return string(k)
}

// Requirement is one checklist item of a task.
type Requirement struct {
	Kind Kind
	Text string
	// Check is an argv of the requirement's own that must pass for it to
	// count as done, written after CheckSep in task.md; nil when the
	// requirement is verified by the gates as a whole.
	Check []string
}

// Task is the structured content of .ralph/task.md.
type Task struct {
	// Title is a short name for the task.
	Title string
	// Type decides how the engine plans the task.
	Type Type
	// Likely is the local classifier's guess (Classify) recorded on Option
	// B templates, whose Type stays Pending; empty when not recorded.
	Likely Type
	// Previous names the snapshot the task starts from, such as
	// "task-2-post", or "none".
	Previous string
	// Counter is the task number N.
	Counter int
	// Requirements is the checklist the agent works through.
	Requirements []Requirement
	// Preserve lists what must survive the task unchanged.
	Preserve []string
	// AffectedFiles lists the files the task is expected to touch.
	AffectedFiles []string
	// Question is what to ask the human; set for NeedsClarification tasks.
	Question string
	// Original is the user's raw message, verbatim.
	Original string
}

// Route returns the type the engine should act on: Type, or for a Pending
// template the Likely guess when one was recorded. It returns Pending when
// there is nothing better to go on.
func (t Task) Route() Type {
	if t.Type == Pending && t.Likely != "" {
		return t.Likely
	}
	return t.Type
}

// Validate reports whether t can be written by Format and read back by
// Parse: its Type, Likely and requirement kinds must be known.
func (t Task) Validate() error {
	if !t.Type.Valid() {
		return fmt.Errorf("invalid task type %q", t.Type)
	}
	if t.Likely != "" && !t.Likely.Valid() {
		return fmt.Errorf("invalid likely type %q", t.Likely)
	}
	for i, r := range t.Requirements {
		if !r.Kind.Valid() {
			return fmt.Errorf("requirement %d: invalid marker %q", i+1, r.Kind)
		}
		if i, _ := checkAt(r.Text); i >= 0 {
			return fmt.Errorf("requirement %d: the text contains %q, which starts a check", i+1, strings.TrimSpace(checkStart))
		}
		if r.Check != nil {
			if err := validArgv(r.Check); err != nil {
				return fmt.Errorf("requirement %d: %w", i+1, err)
			}
		}
	}
	return nil
}

// Placeholder is the text of the Option B template's empty checklist items,
// which the agent replaces during planning.
const Placeholder = "..."

// titleRunes caps the length of a title derived from a message.
const titleRunes = 60

// Template returns the Option B task for msg: Type Pending, the raw message,
// and placeholder requirement and scope lines for the agent to fill in
// during planning. An empty previous is written as "none".
func Template(msg string, counter int, previous string) Task {
	if previous == "" {
		previous = "none"
	}
	return Task{
		Title:         TitleFrom(msg),
		Type:          Pending,
		Previous:      previous,
		Counter:       counter,
		Requirements:  []Requirement{{Kind: Open, Text: Placeholder}},
		Preserve:      []string{Placeholder},
		AffectedFiles: []string{Placeholder},
		Original:      msg,
	}
}

// TitleFrom derives a short title from a message: its first non-blank line,
// trimmed and cut at a word boundary to at most 60 characters.
func TitleFrom(msg string) string {
	for line := range strings.Lines(msg) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) <= titleRunes {
			return line
		}
		cut := string([]rune(line)[:titleRunes-1])
		if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
			cut = cut[:i] // end on a word boundary
		}
		return strings.TrimSpace(cut) + "…"
	}
	return ""
}
