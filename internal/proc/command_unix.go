//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

func command(path string, argv, env []string) *exec.Cmd { return directCommand(path, argv, env) }

func directCommand(path string, argv, env []string) *exec.Cmd {
	return &exec.Cmd{Path: path, Args: argv, Env: env, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
}
