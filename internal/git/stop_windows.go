package git

import "os"

// stop ends git at once: Windows has no signal that asks a program
// without a console window to stop, so git cannot remove its lock files
// first.
func stop(p *os.Process) error { return p.Kill() }
