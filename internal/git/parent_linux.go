package git

import "syscall"

// dieWithParent has the kernel send git SIGTERM when the ralph that
// started it dies, however it dies (kill -9 included); git removes its
// lock files on SIGTERM. The signal follows the thread that started git,
// which the Go runtime keeps for the process's life.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
