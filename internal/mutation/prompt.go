package mutation

import (
	"strconv"
	"strings"
)

// promptTemplate is PromptAddition's text; "{N}" stands for the task number.
const promptTemplate = `## Updating the plan (mutation task)

task.md says Type: mutation. This task changes a project that already has a
plan: you are UPDATING .ralph/plan.tsx in place, not writing a new one.

1. Read .ralph/plan.tsx and .ralph/task.md first (and .ralph/task-history.md
   for what earlier tasks did). ` + "`ralph plan update`" + ` prints the plan's sections,
   the requirements, and the sections each requirement most likely touches.
2. For each requirement in task.md, find the <Screen>, <Section> or <Theme>
   it changes and put a marker comment at the top of that element's body, or
   just before a self-closing <Section />:
     {/* TASK-{N} [ADD]: 2 nighttime drink flavors */}
   Use the requirement's own kind: [ADD], [MODIFY], [FIX] or [REMOVE]. In an
   [ADD] or [REMOVE] marker put the number of items first.
3. A requirement that needs a section the plan does not have gets a new
   <Section> carrying an [ADD] marker.
4. Everything task.md lists under PRESERVE gets a PRESERVED marker on the
   section that holds it, with the number of items there now:
     {/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
5. Every section or screen this task does not touch gets:
     {/* NO CHANGES for task-{N} */}
6. Keep every existing <Section>. Only a [REMOVE] requirement in task.md
   removes one, and then the <Section> stays in the plan with its
   {/* TASK-{N} [REMOVE]: … */} marker until the work is done.
7. [ADD] means new items next to the existing ones. Never rename, rewrite or
   repurpose existing items to satisfy an [ADD]: "add 2 more" to 8 items
   means 10 items afterwards, the original 8 unchanged.
8. Give a section a file="src/…" prop when its source file is not the
   suggested src/sections/<Gumdrop>Section.tsx, so the harness can find it.

The markers are your contract. While building, change only what the markers
ask for. When you finish, the harness compares each marked section's source
file with its content at task-{N}-pre: an [ADD] of N items must raise the
item count by exactly N, PRESERVED items must all still be there unchanged,
and NO CHANGES files must be untouched.
`

// PromptAddition returns the PLAN-phase instructions for a mutation task n,
// to append to the system prompt when the task routes as a mutation. The
// markers it shows name task n; when n is not positive they say TASK-N.
func PromptAddition(n int) string {
	num := "N"
	if n > 0 {
		num = strconv.Itoa(n)
	}
	return strings.ReplaceAll(promptTemplate, "{N}", num)
}
