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

// fsRights are the filesystem rights ralph restricts: those of Landlock
// ABI 7, fixed so a newer kernel does not restrict more than was tested;
// an older one restricts what it can (best effort).
var fsRights = landlock.V7.HandledAccessFS

// ruleset makes p's Landlock ruleset with go-landlock: the filesystem
// and, when p names ports, TCP (ABI 4 or later). Nothing else is
// restricted: not UDP, not IPC scopes.
func ruleset(p Policy) (*os.File, error) {
	st := Probe()
	if !st.Available() {
		return nil, errors.New(st.Reason)
	}
	cfg := landlock.Config{HandledAccessFS: fsRights}
	rules := []landlock.Rule{
		landlock.RODirs(existing(p.Read, true)...).IgnoreIfMissing(),
		landlock.ROFiles(existing(p.Read, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Write, true)...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(existing(p.Write, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Devices, true)...).WithIoctlDev().IgnoreIfMissing(),
	}
	if p.Ports != nil {
		if st.ABI < 4 {
			return nil, fmt.Errorf("restricting the network needs Landlock ABI 4, the kernel has %d", st.ABI)
		}
		cfg.HandledAccessNet = landlock.V4.HandledAccessNet
		for _, port := range p.Ports {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return nil, err
	}
	if fd < 0 {
		return nil, errors.New("nothing to restrict on this kernel")
	}
	if flags != 0 {
		// Only logging options give flags, and ralph sets none.
		os.NewFile(uintptr(fd), "").Close()
		return nil, fmt.Errorf("unexpected ruleset flags %#x", flags)
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), nil
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
