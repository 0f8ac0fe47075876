package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	ok := Status{ABI: 7}
	none := Status{Reason: "this kernel has no Landlock"}
	tests := []struct {
		name    string
		s       Settings
		st      Status
		confine bool
		note    string
		err     string
	}{
		{"confined", Settings{Mode: ModeWorkspace}, ok, true, "", ""},
		{"off", Settings{Mode: ModeOff}, ok, false, `sandbox: the agent is not confined: [sandbox] mode = "off"`, ""},
		{"no landlock", Settings{Mode: ModeWorkspace}, none, false, "sandbox: the agent is not confined: this kernel has no Landlock", ""},
		{"no landlock, required", Settings{Mode: ModeWorkspace, Required: true}, none, false, "", "cannot be confined (this kernel has no Landlock) and [sandbox] required = true"},
		{"network model on ABI 3", Settings{Mode: ModeWorkspace, Network: NetworkModel}, Status{ABI: 3}, false, `sandbox: the agent is not confined: [sandbox] network = "model" needs Landlock ABI 4, this kernel has 3`, ""},
		{"network model on ABI 4", Settings{Mode: ModeWorkspace, Network: NetworkModel}, Status{ABI: 4}, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			confine, note, err := Decide(tt.s, tt.st)
			if confine != tt.confine || note != tt.note {
				t.Errorf("Decide = %v, %q; want %v, %q", confine, note, tt.confine, tt.note)
			}
			if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestProbeSimulatedKernelWithoutLandlock(t *testing.T) {
	t.Setenv(NoLandlockEnv, "1")
	if st := Probe(); st.Available() || st.ABI != 0 || !strings.Contains(st.Reason, "no Landlock") {
		t.Errorf("Probe = %+v, want unavailable", st)
	}
}

func TestRulesetWithoutLandlock(t *testing.T) {
	t.Setenv(NoLandlockEnv, "1")
	if f, err := (Policy{Write: []string{t.TempDir()}}).Ruleset(); err == nil || !strings.Contains(err.Error(), "no Landlock") {
		t.Errorf("Ruleset = %v, %v; want an error saying there is no Landlock", f, err)
	}
}

func TestDenials(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	for _, d := range []string{ws, home, filepath.Join(ws, "sub")} {
		os.MkdirAll(d, 0o755)
	}
	os.Symlink(home, filepath.Join(ws, "link"))
	p := Policy{Write: []string{ws, "/tmp/ralph-agent-1"}, Read: []string{"/usr"}, Devices: []string{"/dev"}}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"cat", "cat: " + home + "/.ssh/id_ed25519: Permission denied", []string{home + "/.ssh/id_ed25519"}},
		{"sh create", "escape.sh: 2: cannot create " + home + "/.bashrc: Permission denied", []string{home + "/.bashrc"}},
		{"touch quoted", "touch: cannot touch '/etc/x': Permission denied", []string{"/etc/x"}},
		{"node", "Error: EACCES: permission denied, open '" + home + "/.aws/credentials'", []string{home + "/.aws/credentials"}},
		{"through a link", "sh: 1: cannot create link/escaped: Permission denied", []string{ws + "/link/escaped"}},
		{"in the workspace", "cat: sub/secret: Permission denied", nil},
		{"in the temporary directory", "cannot open /tmp/ralph-agent-1/x: Permission denied", nil},
		{"no mark", "wrote " + home + "/notes.txt", nil},
		{"no path", "Permission denied", nil},
		{"a url", "curl: https://example.com/x: Permission denied", nil},
		{"twice", "a: /etc/x: Permission denied\nb: /etc/x: Permission denied", []string{"/etc/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Denials(tt.text, ws); !slices.Equal(got, tt.want) {
				t.Errorf("Denials = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzDenials(f *testing.F) {
	f.Add("cat: /home/u/.ssh/id: Permission denied", "/ws")
	f.Add("sh: 1: cannot create link/x: Permission denied\nEACCES '/etc/x'", "/ws")
	f.Add("Operation not permitted: ../../x/./y", "")
	p := Policy{Write: []string{"/ws"}}
	f.Fuzz(func(t *testing.T, text, dir string) {
		for _, path := range p.Denials(text, dir) {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path {
				t.Errorf("Denials gave %q", path)
			}
		}
	})
}

func TestPortsIn(t *testing.T) {
	got := PortsIn([]string{"ANTHROPIC_BASE_URL=http://127.0.0.1:41234", "OPENAI_BASE_URL=https://api.example.com/v1", "HOME=/home/u", "X=http://h:41234/again", "BAD=http://[::1"})
	if want := []uint16{41234, 443}; !slices.Equal(got, want) {
		t.Errorf("PortsIn = %v, want %v", got, want)
	}
}

func TestPrepare(t *testing.T) {
	if c, err := Prepare(nil, Target{Dir: t.TempDir()}); c != nil || err != nil {
		t.Errorf("Prepare(nil) = %v, %v; want nothing", c, err)
	}
	if c, err := Prepare(&Settings{Mode: ModeOff}, Target{Dir: t.TempDir()}); c != nil || err != nil {
		t.Errorf("Prepare(off) = %v, %v; want nothing", c, err)
	}
	home, ws := t.TempDir(), t.TempDir()
	// A worktree: .git names its git directory in the main repository.
	main := t.TempDir()
	gitdir := filepath.Join(main, ".git", "worktrees", "w")
	os.MkdirAll(gitdir, 0o755)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(main, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.MkdirAll(filepath.Join(main, ".git", "objects"), 0o755)
	os.MkdirAll(filepath.Join(main, ".git", "refs"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644)
	s := &Settings{Mode: ModeWorkspace, Read: []string{"~/go/pkg/mod"}, Write: []string{"/var/cache/x"}, Network: NetworkModel}
	c, err := Prepare(s, Target{Dir: ws, Home: home, StateDirs: []string{".claude"}, StateFiles: []string{".claude.json"}, Ports: []uint16{8080, 443}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Policy
	for _, w := range []string{ws, gitdir, filepath.Join(main, ".git", "objects"), filepath.Join(main, ".git", "refs"), filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), "/var/cache/x", c.TmpDir} {
		if !slices.Contains(p.Write, w) {
			t.Errorf("Write = %q, lacks %s", p.Write, w)
		}
	}
	if slices.Contains(p.Write, filepath.Join(main, ".git")) || slices.Contains(p.Write, home) {
		t.Errorf("Write = %q: the main repository's git directory and $HOME must not be writable", p.Write)
	}
	if !slices.Contains(p.Read, filepath.Join(home, "go/pkg/mod")) || !slices.Contains(p.Read, "/usr") || !slices.Contains(p.Read, filepath.Join(main, ".git")) || slices.Contains(p.Read, home) {
		t.Errorf("Read = %q", p.Read)
	}
	if fi, err := os.Stat(filepath.Join(home, ".claude")); err != nil || !fi.IsDir() {
		t.Errorf("state directory not made: %v", err)
	}
	if !slices.Equal(p.Ports, []uint16{443, 8080}) {
		t.Errorf("Ports = %v", p.Ports)
	}
	if env := c.Env(); !slices.Contains(env, "TMPDIR="+c.TmpDir) {
		t.Errorf("Env = %q", env)
	}
	c.Close()
	RemoveSpare()
	if _, err := os.Stat(c.TmpDir); !os.IsNotExist(err) {
		t.Errorf("Close and RemoveSpare left %s", c.TmpDir)
	}
}

// An agent that moves its temporary directory away and puts a symbolic
// link to another directory in its place loses nothing of that other
// directory when the call ends: only the link goes, and it is not kept.
func TestPrivateTmpReplacedByALink(t *testing.T) {
	RemoveSpare()
	t.Setenv("TMPDIR", t.TempDir())
	c, err := Prepare(&Settings{Mode: ModeWorkspace}, Target{Dir: t.TempDir(), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "precious"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(c.TmpDir, c.TmpDir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, c.TmpDir); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if b, err := os.ReadFile(filepath.Join(victim, "precious")); err != nil || string(b) != "keep" {
		t.Fatalf("the link's target lost its file: %q %v", b, err)
	}
	if _, err := os.Lstat(c.TmpDir); !os.IsNotExist(err) {
		t.Errorf("the link is still at %s (%v)", c.TmpDir, err)
	}
	next, err := Prepare(&Settings{Mode: ModeWorkspace}, Target{Dir: t.TempDir(), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.TmpDir == c.TmpDir {
		t.Errorf("the replaced directory's path was handed to the next call")
	}
	RemoveSpare()
}

// A call's private temporary directory is emptied when it ends and kept
// for the next call of the process, private again whatever the agent
// made of it; it is never handed to two calls at once, and RemoveSpare
// removes what is kept.
func TestPrivateTmpReused(t *testing.T) {
	RemoveSpare()
	s := &Settings{Mode: ModeWorkspace}
	prep := func() *Confinement {
		t.Helper()
		c, err := Prepare(s, Target{Dir: t.TempDir(), Home: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := prep()
	if !strings.HasPrefix(filepath.Base(a.TmpDir), TmpPrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("TmpDir %s is not named for this process", a.TmpDir)
	}
	os.MkdirAll(filepath.Join(a.TmpDir, "sub", "deep"), 0o755)
	os.WriteFile(filepath.Join(a.TmpDir, "sub", "deep", "f"), []byte("left"), 0o600)
	os.Chmod(a.TmpDir, 0o777)
	a.Close()
	a.Close() // once only
	b := prep()
	if b.TmpDir != a.TmpDir {
		t.Errorf("the next call got %s, want the ended call's %s", b.TmpDir, a.TmpDir)
	}
	if entries, err := os.ReadDir(b.TmpDir); err != nil || len(entries) != 0 {
		t.Errorf("the kept directory holds %d entries (%v), want none", len(entries), err)
	}
	if fi, err := os.Stat(b.TmpDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the kept directory's mode is %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	c := prep() // b has it: c gets another
	if c.TmpDir == b.TmpDir {
		t.Errorf("two calls share %s", c.TmpDir)
	}
	b.Close()
	c.Close()
	RemoveSpare()
	for _, d := range []string{b.TmpDir, c.TmpDir} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("RemoveSpare left %s", d)
		}
	}
}

// A worktree's agent may write its git directory and the repository's
// objects, refs and logs, read the rest of the repository; but .git and
// commondir are files the agent can write, so a forged one that points
// elsewhere (the home directory) is granted nothing.
func TestGitDirsRefuseForgedPointers(t *testing.T) {
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	base := t.TempDir()
	repo, wt, home := filepath.Join(base, "repo"), filepath.Join(base, "wt"), filepath.Join(base, "home")
	for _, d := range []string{repo, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(repo, "init", "-q", "-b", "main")
	git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
	git(repo, "worktree", "add", "-q", wt)

	read, write := gitDirs(wt)
	common, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git"))
	if len(read) != 1 || read[0] != common || len(write) != 4 || !strings.HasPrefix(write[0], filepath.Join(common, "worktrees")) {
		t.Fatalf("real worktree: read %v, write %v", read, write)
	}

	gitdir := strings.TrimPrefix(strings.TrimSpace(readFile(t, filepath.Join(wt, ".git"))), "gitdir: ")
	forge := func(name, content string) func() {
		old := readFile(t, name)
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.WriteFile(name, []byte(old), 0o644) }
	}
	for _, c := range []struct{ name, file, content string }{
		{"gitdir is home", filepath.Join(wt, ".git"), "gitdir: " + home + "\n"},
		{"commondir is home", filepath.Join(gitdir, "commondir"), home + "\n"},
		{"commondir is the parent", filepath.Join(gitdir, "commondir"), "../../..\n"},
	} {
		restore := forge(c.file, c.content)
		read, write := gitDirs(wt)
		restore()
		for _, d := range append(read, write...) {
			if !strings.HasPrefix(d, common) {
				t.Errorf("%s: granted %s", c.name, d)
			}
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A policy keeps no path beneath one of its writable ones, and keeps the
// writable roots themselves, whatever their spelling.
func TestPolicyWithoutNested(t *testing.T) {
	p := Policy{
		Read:    []string{"/usr", "/home/u/ws/node_modules", "/home/u/ws2", "/home/u/.claude/local/bin", "/home/u/.gitconfig"},
		Write:   []string{"/home/u/ws/", "/home/u/.claude", "/home/u/ws/build", "/tmp/ralph-agent-1"},
		Devices: []string{"/dev"},
		Ports:   []uint16{443},
	}
	got := p.withoutNested()
	want := Policy{
		Read:    []string{"/usr", "/home/u/ws2", "/home/u/.gitconfig"},
		Write:   []string{"/home/u/ws/", "/home/u/.claude", "/tmp/ralph-agent-1"},
		Devices: []string{"/dev"},
		Ports:   []uint16{443},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("withoutNested:\n got %+v\nwant %+v", got, want)
	}
	if all := (Policy{Read: []string{"/usr"}, Write: []string{"/"}}).withoutNested(); len(all.Read) != 0 || len(all.Write) != 1 {
		t.Errorf("under a writable /: %+v, want / alone", all)
	}
}
