package stall

import (
	"fmt"
	"regexp"
	"strings"
)

// GuidanceInput is what recovery guidance is written from.
type GuidanceInput struct {
	// Verdict is the stall being recovered from.
	Verdict Verdict
	// Section is the plan section the agent is stuck on (see FindSection);
	// the zero Section when it could not be identified.
	Section Section
	// LastActions are the agent's last tool calls, oldest first (see
	// Detector.RecentCalls); only the last three are quoted.
	LastActions []Call
}

// markerRE finds a change marker's keyword: the first bracketed word, as in
// "TASK-3 [ADD]: 2 nighttime drink flavors".
var markerRE = regexp.MustCompile(`\[\s*([A-Za-z][A-Za-z ]*?)\s*\]`)

// parseMarker splits a marker into its upper-case keyword ("ADD", "MODIFY",
// "FIX", "REMOVE", "NO CHANGES", or "" when there is none) and the
// description that follows it.
func parseMarker(marker string) (keyword, desc string) {
	if loc := markerRE.FindStringSubmatchIndex(marker); loc != nil {
		keyword = strings.ToUpper(marker[loc[2]:loc[3]])
		desc = strings.Trim(marker[loc[1]:], " \t:-—")
		return keyword, desc
	}
	if strings.Contains(strings.ToUpper(marker), "NO CHANGES") {
		return "NO CHANGES", ""
	}
	return "", strings.TrimSpace(marker)
}

// Guidance returns the markdown the engine writes to .ralph/feedback.md after
// a stall: what ralph saw, the section and marker the agent is stuck on, its
// last three actions, and advice fitted to the marker.
func Guidance(in GuidanceInput) string {
	var b strings.Builder
	v := in.Verdict
	if v.Iteration > 0 {
		fmt.Fprintf(&b, "## Stall recovery (iteration %d)\n\n", v.Iteration)
	} else {
		b.WriteString("## Stall recovery\n\n")
	}

	reason := v.Reason
	if reason == "" {
		reason = "the loop stopped making progress"
	}
	fmt.Fprintf(&b, "ralph stepped in: %s.\n", reason)
	if v.Kind == RepeatedError && v.Evidence.Error != "" {
		fmt.Fprintf(&b, "\nThe error:\n\n```\n%s\n```\n", v.Evidence.Error)
	}
	b.WriteString("\n")

	sec := in.Section
	name := sec.label()
	keyword, desc := parseMarker(sec.Marker)
	if name == "" {
		b.WriteString("- Stuck on: no plan section could be identified from your recent tool calls\n")
	} else {
		fmt.Fprintf(&b, "- Stuck on: %s%s\n", name, sectionDetails(sec))
	}
	if strings.TrimSpace(sec.Marker) != "" {
		fmt.Fprintf(&b, "- Plan marker: %s\n", strings.TrimSpace(sec.Marker))
	} else if name != "" {
		b.WriteString("- Plan marker: none\n")
	}

	actions := in.LastActions
	if len(actions) > recentCallsKept {
		actions = actions[len(actions)-recentCallsKept:]
	}
	if len(actions) > 0 {
		b.WriteString("\nYour last actions, oldest first:\n\n")
		for i, c := range actions {
			fmt.Fprintf(&b, "%d. `%s`\n", i+1, strings.ReplaceAll(summarize(c), "`", "'"))
		}
	}

	b.WriteString("\n### What to do now\n\n")
	b.WriteString(advice(keyword, desc, sec, v.Kind))
	b.WriteString("\n")
	return b.String()
}

// WithFeedback puts recovery guidance above what feedback.md already says
// (the gate failures being fixed, plan validation failures, the build
// instructions), so the agent learns how to get unstuck without losing
// what it was asked to fix. An empty current returns the guidance alone.
func WithFeedback(guidance, current string) string {
	guidance = strings.TrimRight(guidance, "\n") + "\n"
	current = strings.TrimSpace(current)
	if current == "" {
		return guidance
	}
	return guidance + "\n---\n\nThe harness's feedback from before the stall still applies; work through it with the advice above:\n\n" + current + "\n"
}

// sectionDetails returns the section's gumdrop and file in parentheses, the
// ones that add anything to its label.
func sectionDetails(s Section) string {
	var parts []string
	if s.Gumdrop != "" && s.Gumdrop != s.label() {
		parts = append(parts, fmt.Sprintf("gumdrop `%s`", s.Gumdrop))
	}
	if s.File != "" && s.File != s.label() {
		parts = append(parts, fmt.Sprintf("`%s`", s.File))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// advice returns the marker-specific part of the guidance.
func advice(keyword, desc string, sec Section, kind Kind) string {
	name := sec.label()
	if name == "" {
		name = "this section"
	}
	what := ""
	if desc != "" {
		what = " (" + desc + ")"
	}
	var first string
	switch kind {
	case Repeat:
		first = "Repeating the same calls will give the same result. "
	case NoProgress:
		first = "Your recent calls changed no files. "
	case RepeatedError:
		first = "Your last attempts end in the same error. "
	}
	switch keyword {
	case "ADD":
		return first + fmt.Sprintf("You appear stuck adding to %s. "+
			"Leave the items that are already there exactly as they are: do not rewrite, convert or reorder them. "+
			"Write only the new items%s and append them after the existing ones, "+
			"then check that the number of items went up by the number you added.", name, what)
	case "MODIFY":
		return first + fmt.Sprintf("You appear stuck modifying %s. "+
			"Stop patching it line by line. Read the whole file as it is now, "+
			"then write the entire section again with the change%s made, in a single write.", name, what)
	case "FIX":
		return first + fmt.Sprintf("You appear stuck fixing %s. "+
			"Stop editing and look first: build or preview the page and read the rendered output. "+
			"Then trace the toggle and state logic behind the broken behaviour (the handler, the state it sets, "+
			"and the attribute or CSS variables that state should switch) and fix the cause%s. "+
			"Do not change the section's content.", name, what)
	case "REMOVE":
		return first + fmt.Sprintf("You appear stuck removing %s%s. "+
			"Delete the section's code outright rather than emptying it piece by piece, "+
			"then remove its imports and every reference to it, and build to confirm nothing still points at it.", name, what)
	case "NO CHANGES":
		file := "its files"
		if sec.File != "" {
			file = "`" + sec.File + "`"
		}
		return first + fmt.Sprintf("%s is marked NO CHANGES: it is out of scope for this task. "+
			"Undo your edits to %s and work on the sections the task names.", name, file)
	}
	return first + "Step back. Re-read `.ralph/task.md` and the rest of this feedback, " +
		"then try a different approach from the one you have been repeating: " +
		"a different file, a different tool, or a smaller step."
}

// FailureMessage returns the markdown the engine writes to
// .ralph/feedback.md, and tells the user, when task stalls a second time:
// ralph has rolled the project back to snapshot task-N-pre and the task has
// failed.
func FailureMessage(task int) string {
	return fmt.Sprintf("## Task %d failed: stalled\n\n"+
		"The agent got stuck twice on task %d, and recovery guidance did not get it moving again. "+
		"ralph rolled the project back to snapshot `task-%d-pre`, so the workspace is as it was before the task began.\n\n"+
		"Try rephrasing the task more concretely, or split it into smaller tasks and run them one at a time.\n",
		task, task, task)
}
