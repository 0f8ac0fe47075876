package proc

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// Linux's numbers for what enforcing a Landlock ruleset takes; the
// landlock_restrict_self number is the same on every architecture. The
// supervisor makes these two calls itself, with the syscall package only,
// so it still runs before the heavy packages of the binary initialise;
// the ruleset was made with go-landlock (internal/sandbox) in ralph.
const (
	sysLandlockRestrictSelf = 446
	prSetNoNewPrivs         = 38
)

// confineThread enforces the ruleset the supervisor was handed, if any,
// on the calling goroutine's thread, which stays locked to it: a program
// that goroutine starts inherits the restriction, the supervisor's other
// threads do not. It closes the ruleset and removes its variable, so the
// program inherits neither.
func confineThread() error {
	v, ok := os.LookupEnv(sandboxEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(sandboxEnv)
	fd, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("sandbox: %s=%q", sandboxEnv, v)
	}
	return restrictThread(fd)
}

// restrictThread enforces the Landlock ruleset fd on the calling
// goroutine's thread, which stays locked to it, and closes fd.
func restrictThread(fd int) error {
	defer syscall.Close(fd)
	runtime.LockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); e != 0 {
		return fmt.Errorf("sandbox: no_new_privs: %w", e)
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", e)
	}
	return nil
}
