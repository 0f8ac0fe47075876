// Package supervisor makes a ralph binary act as the supervisor of a
// program (see proc.RunSupervisor) before the rest of the binary
// initialises. ralph re-executes itself as the one persistent supervisor
// of the agents and gates it runs (or, failing that, as the supervisor of
// one program); imported for its side effect by cmd/ralph, this
// package's init runs proc.RunSupervisor among the first packages Go
// initialises (the order is by import path, a package once its imports
// are done), so a supervisor never pays for the initialisation of the
// packages it does not use: the Temporal SDK, gRPC, the SQLite driver,
// the model SDKs.
package supervisor

import "github.com/ralph-harness/ralph/internal/proc"

func init() { proc.RunSupervisor() }
