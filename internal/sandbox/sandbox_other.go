//go:build !linux

package sandbox

import "os"

// probe says agents cannot be confined here: only Linux has Landlock.
func probe() Status {
	return Status{Reason: "the sandbox is " + errUnsupported.Error() + " (it uses Linux's Landlock)"}
}

func ruleset(Policy) (*os.File, error) { return nil, errUnsupported }
