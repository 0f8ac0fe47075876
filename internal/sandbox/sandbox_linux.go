package sandbox

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// probe asks the kernel for its Landlock ABI version.
func probe() Status {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return Status{Reason: "this kernel has no Landlock (or it is not enabled at boot)"}
	}
	return Status{ABI: abi}
}

// fsConfig is the Landlock version whose filesystem rights ralph asks
// for: fixed, so a newer kernel does not restrict more than was tested,
// and best effort, so an older one restricts what it can.
var fsConfig = landlock.V7.BestEffort()

// apply restricts the process with Landlock: the filesystem, then, when
// p names ports, TCP.
func apply(p Policy) error {
	st := Probe()
	if !st.Available() {
		return errors.New(st.Reason)
	}
	rules := []landlock.Rule{
		landlock.RODirs(existing(p.Read, true)...).IgnoreIfMissing(),
		landlock.ROFiles(existing(p.Read, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Write, true)...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(existing(p.Write, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Devices, true)...).WithIoctlDev().IgnoreIfMissing(),
	}
	if err := fsConfig.RestrictPaths(rules...); err != nil {
		return fmt.Errorf("restrict paths: %w", err)
	}
	if p.Ports == nil {
		return nil
	}
	if st.ABI < 4 {
		return fmt.Errorf("restrict network: needs Landlock ABI 4, the kernel has %d", st.ABI)
	}
	var net []landlock.Rule
	for _, port := range p.Ports {
		net = append(net, landlock.ConnectTCP(port))
	}
	if err := landlock.V4.RestrictNet(net...); err != nil {
		return fmt.Errorf("restrict network: %w", err)
	}
	return nil
}

// existing returns the paths that exist and are directories (dirs) or
// not: Landlock grants directory rights on directories only.
func existing(paths []string, dirs bool) []string {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err == nil && fi.IsDir() == dirs {
			out = append(out, p)
		}
	}
	return out
}
