// Package sandbox confines an agent process to its workspace: what it may
// read and write, and where it may connect.
//
// A run's [sandbox] settings (Settings) and one agent call's target (the
// workspace, the program, the backend's own state files) make a Policy:
//
//   - read and write: the workspace; for a worktree, its git directory and
//     the objects, refs and logs of the repository it belongs to (the rest
//     of that repository's git directory is read-only); a
//     private temporary directory ($TMPDIR), emptied after the call and
//     kept for the process's next one; the backend's state directories
//     and files in $HOME; /dev;
//     the paths of [sandbox] write;
//   - read (and execute): the system (/usr, /lib*, /bin, /sbin, /etc,
//     /opt, /run, /proc, /sys), the install the program lives in (its
//     node_modules tree, and the Node installation on PATH), git's
//     configuration in $HOME, ralph's own binary, the paths of [sandbox]
//     read;
//   - nothing else: the rest of $HOME (~/.ssh, ~/.aws, other
//     repositories) and of /tmp is out of reach.
//
// A path of the policy beneath a writable one is left out: the agent can
// put a symbolic link there, and a rule made from it would grant where
// the link leads.
//
// With network "model" the agent may connect over TCP only to port 443
// and the ports of its model endpoints, and may not listen on any port.
// Landlock filters ports, not hosts.
//
// Prepare makes a call's Confinement. Its Policy becomes a Landlock
// ruleset (Ruleset, made with go-landlock in ralph, and kept for the
// calls after while every path it names is still the same file), which
// travels as an inherited file descriptor to the process that will run
// the agent (proc's supervisor); that process enforces it on the thread
// that starts the agent, right before it does, so the restriction holds
// for the agent and everything it starts and never for ralph itself or
// the gates. Landlock is Linux-only; elsewhere Probe says why the agent
// cannot be confined. A sandbox-exec profile for macOS would be another
// Ruleset behind the same Policy.
//
// Denials reads what a tool reported for accesses the policy refused, so
// the harness can record them.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Mode is how an agent is confined: [sandbox] mode.
type Mode string

// Modes.
const (
	// ModeWorkspace confines the agent to its workspace (the default).
	ModeWorkspace Mode = "workspace"
	// ModeOff runs the agent unconfined.
	ModeOff Mode = "off"
)

// Network is what an agent may connect to: [sandbox] network.
type Network string

// Network modes.
const (
	// NetworkOpen leaves the network alone (the default).
	NetworkOpen Network = "open"
	// NetworkModel allows TCP connections only to port 443 and the ports
	// of the model endpoints, and no listening.
	NetworkModel Network = "model"
)

// Settings are a run's [sandbox] settings.
type Settings struct {
	Mode Mode
	// Read and Write are paths added to what the agent may read, or read
	// and write: absolute, or ~/… for the user's home.
	Read, Write []string
	Network     Network
	// Required refuses to run an agent that cannot be confined.
	Required bool
}

// NoLandlockEnv, set to 1, makes Probe report a kernel without Landlock:
// tests use it to see what ralph does there.
const NoLandlockEnv = "RALPH_SANDBOX_NO_LANDLOCK"

// Status is whether agents can be confined here.
type Status struct {
	// ABI is the kernel's Landlock ABI version, 0 when it has none.
	ABI int
	// Reason says why agents cannot be confined; empty when they can.
	Reason string
}

// Available reports whether agents can be confined.
func (s Status) Available() bool { return s.Reason == "" }

// String describes the status in a few words.
func (s Status) String() string {
	if !s.Available() {
		return "unavailable: " + s.Reason
	}
	return fmt.Sprintf("Landlock ABI %d", s.ABI)
}

// Probe reports whether agents can be confined on this system.
func Probe() Status {
	if os.Getenv(NoLandlockEnv) == "1" {
		return Status{Reason: "this kernel has no Landlock (simulated by " + NoLandlockEnv + "=1)"}
	}
	return probe()
}

// Decide says whether a run with settings s confines its agents on a
// system in status st. Not confining, it returns the line to show at the
// start of the run; with [sandbox] required, an error instead.
func Decide(s Settings, st Status) (confine bool, note string, err error) {
	why := ""
	switch {
	case s.Mode == ModeOff:
		why = `[sandbox] mode = "off"`
	case !st.Available():
		why = st.Reason
	case s.Network == NetworkModel && st.ABI < 4:
		why = fmt.Sprintf(`[sandbox] network = "model" needs Landlock ABI 4, this kernel has %d`, st.ABI)
	}
	if why == "" {
		return true, "", nil
	}
	if s.Required {
		return false, "", fmt.Errorf("sandbox: the agent cannot be confined (%s) and [sandbox] required = true", why)
	}
	return false, "sandbox: the agent is not confined: " + why, nil
}

// Policy is what one agent process may touch.
type Policy struct {
	// Read are files and directories the agent may read and execute.
	Read []string `json:"read,omitempty"`
	// Write are files and directories it may also write, create and
	// remove in.
	Write []string `json:"write,omitempty"`
	// Devices are directories of device files it may read, write and
	// control (ioctl).
	Devices []string `json:"devices,omitempty"`
	// Ports, when not nil, are the only TCP ports it may connect to; it
	// may then listen on none.
	Ports []uint16 `json:"ports,omitempty"`
}

// withoutNested returns p without the paths that lie beneath one of its
// Write paths (the roots kept): what is beneath a writable directory is
// the agent's to replace, by a symbolic link to anywhere, and a rule made
// from such a path would follow the link and grant its target; the
// directory's own rule already grants what is really beneath it.
func (p Policy) withoutNested() Policy {
	beneath := func(path string) bool {
		for _, w := range p.Write {
			w = filepath.Clean(w)
			if rest, ok := strings.CutPrefix(filepath.Clean(path), w); ok && (w == "/" && rest != "" || strings.HasPrefix(rest, "/")) {
				return true
			}
		}
		return false
	}
	keep := func(paths []string) []string {
		var out []string
		for _, path := range paths {
			if !beneath(path) {
				out = append(out, path)
			}
		}
		return out
	}
	return Policy{Read: keep(p.Read), Write: keep(p.Write), Devices: keep(p.Devices), Ports: p.Ports}
}

// Ruleset returns the Landlock ruleset that confines a process to p, as
// an open file of its own: the process that starts the agent (proc's supervisor)
// enforces it on itself right before it executes the agent. The caller
// closes it once that process has started.
func (p Policy) Ruleset() (*os.File, error) {
	f, err := ruleset(p)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return f, nil
}

// Target is what one agent call confines: where and what it runs.
type Target struct {
	// Dir is the workspace, the agent's working directory.
	Dir string
	// Program is the path of the program run.
	Program string
	// StateDirs and StateFiles are the backend's own state in $HOME,
	// relative to it (".claude", ".claude.json"). Missing directories
	// are made before the call.
	StateDirs, StateFiles []string
	// Ports are the ports of the model endpoints, for network "model".
	Ports []uint16
	// Home is the agent's $HOME; empty means ralph's.
	Home string
	// PATH is the agent's PATH, to find the Node installation; empty
	// means ralph's.
	PATH string
}

// Confinement is one agent call's sandbox: its policy and the private
// temporary directory the policy names. Close removes the directory.
type Confinement struct {
	Policy Policy
	// TmpDir is the call's private temporary directory.
	TmpDir string
	tmp    tmpDir
	closed bool
}

// tmpDir is a private temporary directory and what it was when ralph
// made it: the agent may put something else at its path.
type tmpDir struct {
	path string
	info os.FileInfo
}

// Env returns what the agent's environment needs: TMPDIR (and its
// spellings) pointing at the private temporary directory.
func (c *Confinement) Env() []string {
	return []string{"TMPDIR=" + c.TmpDir, "TMP=" + c.TmpDir, "TEMP=" + c.TmpDir}
}

// Close removes what the agent left in the temporary directory and keeps
// the directory, empty, for this process's next call (one that cannot be
// emptied is removed). Calls after the first do nothing.
func (c *Confinement) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if err := emptyDir(c.tmp); err != nil {
		// Not the directory ralph made (the agent moved it and put
		// something else, a symbolic link, at its path), or not
		// emptied: what is at the path goes, never what it points to.
		return os.RemoveAll(c.tmp.path)
	}
	spareTmp.Lock()
	spareTmp.dirs = append(spareTmp.dirs, c.tmp)
	spareTmp.Unlock()
	return nil
}

// TmpPrefix begins the name of a call's private temporary directory; the
// pid of the ralph that made it and a dash follow, so that the
// directories of a ralph killed outright can be told and removed
// (proc.SweepTemp).
const TmpPrefix = "ralph-agent-"

// spareTmp holds the private temporary directories of ended calls,
// emptied, for the next calls of this process: making a directory costs
// more than the rest of preparing a call (ext4 searches for an inode not
// recently freed), and a call after call is what a run is.
var spareTmp struct {
	sync.Mutex
	dirs []tmpDir
}

// privateTmp returns an empty private temporary directory for one call:
// a spare one, or a new one.
func privateTmp() (tmpDir, error) {
	spareTmp.Lock()
	for len(spareTmp.dirs) > 0 {
		d := spareTmp.dirs[len(spareTmp.dirs)-1]
		spareTmp.dirs = spareTmp.dirs[:len(spareTmp.dirs)-1]
		// Still the directory ralph made; the agent may have opened it
		// to others (chmod is not an access the sandbox refuses):
		// private again.
		if fi, err := os.Lstat(d.path); err == nil && fi.IsDir() && os.SameFile(fi, d.info) && os.Chmod(d.path, 0o700) == nil {
			spareTmp.Unlock()
			return d, nil
		}
	}
	spareTmp.Unlock()
	path, err := os.MkdirTemp("", TmpPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return tmpDir{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		os.Remove(path)
		return tmpDir{}, err
	}
	return tmpDir{path: path, info: fi}, nil
}

// RemoveSpare removes the temporary directories kept for calls to come:
// for a process that makes no more calls (ralph as it exits).
func RemoveSpare() {
	spareTmp.Lock()
	defer spareTmp.Unlock()
	for _, d := range spareTmp.dirs {
		os.RemoveAll(d.path)
	}
	spareTmp.dirs = nil
}

// emptyDir removes everything in the directory d names, through a
// handle on it (os.Root): it fails, removing nothing, when what is at the
// path is not the directory d was made as, so that a symbolic link put in
// its place never leads the removal elsewhere.
func emptyDir(d tmpDir) error {
	root, err := os.OpenRoot(d.path)
	if err != nil {
		return err
	}
	defer root.Close()
	if fi, err := root.Stat("."); err != nil || !os.SameFile(fi, d.info) {
		return errors.New("sandbox: the temporary directory was replaced")
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := root.RemoveAll(e.Name()); err != nil {
			return err
		}
	}
	return nil
}

// systemRead are the places programs are run from and configured by.
var systemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/run", "/proc", "/sys"}

// homeRead are the files in $HOME every agent may read: git's own
// configuration, which a commit in the workspace needs.
var homeRead = []string{".gitconfig", ".config/git"}

// Prepare makes the confinement of one agent call under settings s: nil
// when s is nil or its mode is off. It makes the private temporary
// directory and the backend's missing state directories.
func Prepare(s *Settings, t Target) (*Confinement, error) {
	if s == nil || s.Mode == ModeOff {
		return nil, nil
	}
	home := t.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	dir, err := filepath.Abs(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var p Policy
	p.Write = append(p.Write, dir)
	gitRead, gitWrite := gitDirs(dir)
	p.Read = append(p.Read, gitRead...)
	p.Write = append(p.Write, gitWrite...)
	for _, d := range t.StateDirs {
		path := filepath.Join(home, d)
		if err := os.MkdirAll(path, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		p.Write = append(p.Write, path)
	}
	for _, f := range t.StateFiles {
		p.Write = append(p.Write, filepath.Join(home, f))
	}
	for _, w := range s.Write {
		p.Write = append(p.Write, expand(w, home))
	}
	p.Read = append(p.Read, systemRead...)
	for _, r := range homeRead {
		p.Read = append(p.Read, filepath.Join(home, r))
	}
	p.Read = append(p.Read, installDirs(t.Program, t.PATH)...)
	if exe, err := os.Executable(); err == nil {
		p.Read = append(p.Read, exe)
	}
	for _, r := range s.Read {
		p.Read = append(p.Read, expand(r, home))
	}
	p.Devices = []string{"/dev"}
	if s.Network == NetworkModel {
		p.Ports = []uint16{443}
		for _, port := range t.Ports {
			if !slices.Contains(p.Ports, port) {
				p.Ports = append(p.Ports, port)
			}
		}
	}
	tmp, err := privateTmp()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.Write = append(p.Write, tmp.path)
	return &Confinement{Policy: p, TmpDir: tmp.path, tmp: tmp}, nil
}

// expand turns ~/x into a path in home.
func expand(path, home string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return filepath.Join(home, rest)
	}
	if path == "~" {
		return home
	}
	return filepath.Clean(path)
}

// gitDirs are the directories outside the workspace that git needs in it:
// for a worktree (.git is a file naming its git directory), the
// repository's common directory to read (its configuration and hooks stay
// read-only), and to write the worktree's git directory and the common
// directory's objects, refs and logs.
func gitDirs(dir string) (read, write []string) {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil, nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil, nil
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return nil, nil
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	// The agent can write .git and the worktree's git directory, so both
	// files are its to forge: grant nothing unless they describe what git
	// makes, a repository whose worktrees/ holds this git directory, on
	// real paths (no link leads elsewhere).
	gitdir, errG := filepath.EvalSymlinks(gitdir)
	common, errC := filepath.EvalSymlinks(common)
	if errG != nil || errC != nil || filepath.Dir(gitdir) != filepath.Join(common, "worktrees") || !isRepository(common) {
		return nil, nil
	}
	dirs := []string{gitdir}
	read = append(read, common)
	for _, d := range []string{"objects", "refs", "logs"} {
		dirs = append(dirs, filepath.Join(common, d))
	}
	return read, dirs
}

// isRepository reports whether dir looks like a git directory: a HEAD
// file and objects and refs directories.
func isRepository(dir string) bool {
	for name, wantDir := range map[string]bool{"HEAD": false, "objects": true, "refs": true} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() != wantDir {
			return false
		}
	}
	return true
}

// installDirs are the directories of the installation program lives in:
// its own directory, the node_modules tree its real path is in, and the
// Node installation on path (the directory above node's bin).
func installDirs(program, path string) []string {
	if program == "" {
		return nil
	}
	dirs := []string{filepath.Dir(program)}
	if real, err := filepath.EvalSymlinks(program); err == nil {
		dirs = append(dirs, filepath.Dir(real))
		if i := strings.Index(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
			dirs = append(dirs, real[:i+len("/node_modules")])
		}
	}
	if node := lookPath("node", path); node != "" {
		if real, err := filepath.EvalSymlinks(node); err == nil {
			if prefix := filepath.Dir(filepath.Dir(real)); prefix != "/" && prefix != "/usr" {
				dirs = append(dirs, prefix)
			}
		}
	}
	return dirs
}

// lookPath finds program in the directories of path (ralph's PATH when
// empty).
func lookPath(program, path string) string {
	if path == "" {
		p, err := exec.LookPath(program)
		if err != nil {
			return ""
		}
		return p
	}
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, program)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// errUnsupported is Apply's error where Landlock does not exist.
var errUnsupported = errors.New("not supported on " + runtime.GOOS)

// PortsIn returns the ports of the URLs in env's values (KEY=VALUE):
// where the agent's model endpoints are.
func PortsIn(env []string) []uint16 {
	var ports []uint16
	for _, kv := range env {
		_, v, _ := strings.Cut(kv, "=")
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err == nil && !slices.Contains(ports, uint16(n)) {
			ports = append(ports, uint16(n))
		}
	}
	return ports
}
