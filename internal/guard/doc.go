// Package guard keeps what the agent may not change. The agent runs in the
// working tree with a shell, so it can write anything there and run git;
// ralph's promise that the harness, not the agent, decides when the work is
// done holds only if the harness notices, undoes and reports such changes
// (SPEC §2, §9).
//
// Three things are guarded: the harness's own files in .ralph/, the files
// the quality gates depend on, and the user's history, one file of this
// package each; history.go holds the history guard.
//
// The history guard compares the repository after an agent's iteration
// with an Origin (the branch and commit the task started from, kept in the
// store, never in a file the agent can write) and a HistoryMark (the branch tip
// and ralph's snapshot refs as they stood before the agent ran). A branch
// switched or detached, a task-start commit that is no longer an ancestor
// of the branch tip (a reset, rebase, amend or force that drops commits),
// or a snapshot ref created, moved or deleted, is put back by History; the
// agent's version is kept under refs/ralph/agent/ for inspection, and the
// HistoryReport says in ralph's words what happened. New commits on the branch
// are the agent's work and are never reported.
package guard
