package temporaltest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/server/temporaltest"
)

// ralphBin is the ralph binary built from the main module for the tests.
var ralphBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ralph-temporaltest-")
	if err != nil {
		panic(err)
	}
	ralphBin = filepath.Join(dir, "ralph")
	build := exec.Command("go", "build", "-o", ralphBin, "./cmd/ralph")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ralph:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is an in-process Temporal server.
type cluster struct {
	addr, ns string
	ts       *temporaltest.TestServer
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	return cluster{addr: ts.GetFrontendHostPort(), ns: ts.GetDefaultNamespace(), ts: ts}
}

// args are the flags that point a ralph command at c.
func (c cluster) args() []string { return []string{"--temporal", c.addr, "--namespace", c.ns} }

func gitEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=ralph test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=ralph test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// repo makes a checkout with files committed and pushed to a bare remote
// (origin, a file:// URL); it returns the checkout.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	work := filepath.Join(root, "work")
	run(t, root, "git", "init", "-q", "--bare", "-b", "main", remote)
	run(t, root, "git", "init", "-q", "-b", "main", work)
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, work, ralphBin, "init")
	run(t, work, "git", "add", "-A")
	run(t, work, "git", "commit", "-qm", "init")
	run(t, work, "git", "remote", "add", "origin", "file://"+remote)
	run(t, work, "git", "push", "-q", "origin", "main")
	return work
}

// proc is a ralph process running in the background.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Output is what the process printed so far.
func (p *proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(ralphBin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = gitEnv()
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("ralph %s:\n%s", strings.Join(args, " "), p.Output())
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("ralph %s still runs after %s:\n%s", strings.Join(p.cmd.Args[1:], " "), d, p.Output())
	}
	return p.cmd.ProcessState.ExitCode()
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// worker starts `ralph worker` named name with its own cache.
func worker(t *testing.T, c cluster, name string, concurrency int) (*proc, string) {
	t.Helper()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	args := append([]string{"worker"}, c.args()...)
	args = append(args, "--identity", name, "--cache", cache, "--concurrency", fmt.Sprint(concurrency))
	return start(t, dir, args...), cache
}

// runQuiet runs a command and returns its output and error.
func runQuiet(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func itoa(n int) string { return fmt.Sprint(n) }
