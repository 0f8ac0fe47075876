package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
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

// ruleset returns p's Landlock ruleset: the filesystem and, when p names
// ports, TCP (ABI 4 or later). Nothing else is restricted: not UDP, not
// IPC scopes. It is the ruleset made for p before (made) while every path
// of p is still the file it was then, and a new one otherwise.
func ruleset(p Policy) (*os.File, error) {
	st := Probe()
	if !st.Available() {
		return nil, errors.New(st.Reason)
	}
	if p.Ports != nil && st.ABI < 4 {
		return nil, fmt.Errorf("restricting the network needs Landlock ABI 4, the kernel has %d", st.ABI)
	}
	p = p.withoutNested()
	read, write, devices := identify(p.Read), identify(p.Write), identify(p.Devices)
	key := p.key()
	ids := slices.Concat(read, write, devices)
	if f, ok := made.take(key, ids); ok {
		return f, nil
	}
	cfg := landlock.Config{HandledAccessFS: fsRights}
	rules := []landlock.Rule{
		landlock.RODirs(existing(p.Read, read, true)...).IgnoreIfMissing(),
		landlock.ROFiles(existing(p.Read, read, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Write, write, true)...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(existing(p.Write, write, false)...).IgnoreIfMissing(),
		landlock.RWDirs(existing(p.Devices, devices, true)...).WithIoctlDev().IgnoreIfMissing(),
	}
	if p.Ports != nil {
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
	f := os.NewFile(uintptr(fd), "landlock-ruleset")
	if flags != 0 {
		// Only logging options give flags, and ralph sets none.
		f.Close()
		return nil, fmt.Errorf("unexpected ruleset flags %#x", flags)
	}
	return made.keep(key, ids, f)
}

// fileID is what a path of a policy led to when it was looked at: the
// file's device, inode and kind, or nothing.
type fileID struct {
	exists, dir bool
	dev, ino    uint64
}

// identify looks at each path (following symbolic links, as a rule made
// from it does).
func identify(paths []string) []fileID {
	ids := make([]fileID, len(paths))
	for i, p := range paths {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err == nil {
			ids[i] = fileID{exists: true, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR, dev: uint64(st.Dev), ino: st.Ino}
		}
	}
	return ids
}

// existing returns the paths that exist and are directories (dirs) or
// not, by what identify found (ids[i] is paths[i]): Landlock grants
// directory rights on directories only.
func existing(paths []string, ids []fileID, dirs bool) []string {
	var out []string
	for i, p := range paths {
		if ids[i].exists && ids[i].dir == dirs {
			out = append(out, p)
		}
	}
	return out
}

// key is p as a map key: its lists in order, and its ports.
func (p Policy) key() string {
	var b strings.Builder
	for _, list := range [][]string{p.Read, p.Write, p.Devices} {
		for _, path := range list {
			b.WriteString(path)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	if p.Ports != nil {
		b.WriteByte('p')
		for _, port := range p.Ports {
			b.WriteString(strconv.Itoa(int(port)))
			b.WriteByte(',')
		}
	}
	return b.String()
}

// made keeps the rulesets made for the last few policies, for the next
// call of the same policy: a run calls its agent with one policy time
// after time, and opening every path of it and adding its rule cost more
// than the rest of preparing the call.
//
// A kept ruleset is used again only while each path of its policy leads
// to the same file it led to when the ruleset was made (or is still
// missing). A Landlock rule holds the inode it was made from, so while the
// ruleset is open that inode's number is not given to another file of its
// device: the same device and inode is the very file the rule grants, and
// the kept ruleset grants what a new one would. A path that leads
// elsewhere now (a directory made again, a link changed) makes a new one.
// (A file system unmounted and mounted again may give its files the old
// numbers: the kept rules then grant less, never more.) No path of a
// policy is one the agent can replace (withoutNested), so none changes
// between the look and the rule made from it but by the user's hand.
var made = madeRulesets{max: 8}

type madeRulesets struct {
	sync.Mutex
	max  int
	kept []keptRuleset // oldest first
}

type keptRuleset struct {
	key string
	ids []fileID
	f   *os.File
}

// take returns a copy of the descriptor of the ruleset kept for key, if
// its paths are still ids.
func (m *madeRulesets) take(key string, ids []fileID) (*os.File, bool) {
	m.Lock()
	defer m.Unlock()
	for _, k := range m.kept {
		if k.key == key && slices.Equal(k.ids, ids) {
			f, err := dup(k.f)
			return f, err == nil
		}
	}
	return nil, false
}

// keep keeps f as the ruleset for key made from paths that were ids, in
// place of the one kept for key before, and returns a copy of it for the
// caller to close.
func (m *madeRulesets) keep(key string, ids []fileID, f *os.File) (*os.File, error) {
	c, err := dup(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	m.Lock()
	defer m.Unlock()
	m.kept = slices.DeleteFunc(m.kept, func(k keptRuleset) bool {
		if k.key == key && slices.Equal(k.ids, ids) {
			k.f.Close()
		}
		return k.key == key
	})
	if len(m.kept) >= m.max {
		m.kept[0].f.Close()
		m.kept = m.kept[1:]
	}
	m.kept = append(m.kept, keptRuleset{key: key, ids: ids, f: f})
	return c, nil
}

// dup returns a new descriptor of f, closed on exec.
func dup(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("keep the ruleset: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
