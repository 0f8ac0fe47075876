// Package mutation supports the third way a plan comes to be (SPEC §9, seed
// 002 §6): the agent updates the existing .ralph/plan.tsx for a mutation
// task instead of writing a new one, and marks every change in place with
// JSX comments:
//
//	{/* TASK-3 [ADD]: 2 nighttime drink flavors */}
//	{/* TASK-3 [MODIFY]: refine the copy */}   also [FIX] and [REMOVE]
//	{/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
//	{/* NO CHANGES for task-3 */}
//
// The package gives the harness three things:
//
//   - PromptAddition, the PLAN-phase instructions for a mutation task;
//   - Context, what `ralph plan update` prints: the plan's screens and
//     sections with their files and markers, the requirements of task.md,
//     and the sections each requirement most likely touches (Affected);
//   - Validate, the checks a mutation plan must pass on top of plan.Validate:
//     every requirement has a marker of the task (warn requirement-unmarked),
//     and no section of the plan at task start disappears without a [REMOVE]
//     marker (fail section-removed-unmarked).
//
// The agent still writes the plan; nothing here rewrites it. Whether the
// build then kept to the markers is the scope gate's business (package
// gate, which counts items with package scope).
package mutation
