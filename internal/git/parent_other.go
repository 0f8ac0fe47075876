//go:build !linux

package git

import "syscall"

// dieWithParent: only Linux has a parent-death signal; elsewhere a git
// started by a ralph that is killed finishes on its own.
func dieWithParent() *syscall.SysProcAttr { return nil }
