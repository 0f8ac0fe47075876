// Package stall notices when an agent loop stops getting anywhere and says
// what to do about it (SPEC §10, seed 002 §8).
//
// The engine calls it once per iteration: Signature turns the iteration's
// tool calls into a hash that ignores how the inputs were spelled, TreeHash
// (or a TreeHasher) hashes the workspace's content, and a Detector fed an
// Observation of both, plus the iteration's errors, returns a Verdict. On a
// stall the engine snapshots, finds the plan section the agent is stuck on
// with FindSection, writes Guidance to .ralph/feedback.md, calls
// Detector.NoteRecovery and Detector.Reset, and carries on; on the second
// recovery of a task it rolls back and writes FailureMessage instead.
//
// The package is a leaf: it imports only the standard library and knows
// nothing of plans, snapshots or the engine beyond the plain values passed
// in.
package stall
