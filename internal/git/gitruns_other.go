//go:build !linux

package git

// gitRunsIn cannot tell here: known is false.
func gitRunsIn(dirs []string) (running, known bool) { return false, false }
