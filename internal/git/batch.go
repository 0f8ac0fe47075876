package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// A Batch is one long-running git command that answers requests on its
// standard input, one after another, on its standard output: `hash-object
// -w --stdin-paths`, `mktree --batch`, `cat-file --batch`. It spares a
// process start for each request, which is most of the cost of a small
// one. A Batch is for one goroutine at a time; after any error it is
// closed, and the caller starts another (or runs git once instead).
type Batch struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	args   []string
	err    error // why it is closed, nil while it runs
}

// StartBatch starts git with args in dir, under the environment Run uses
// with o.Env added (o.Stdin and o.Inherit are not used). Like every git
// ralph runs, it dies with ralph; it also ends when its standard input
// closes (Close, or ralph's exit).
func StartBatch(dir string, o Options, args ...string) (*Batch, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.SysProcAttr = dieWithParent()
	cmd.Env = Env(o.Env...)
	if o.ReadOnly {
		cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return &Batch{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), stderr: stderr, args: args}, nil
}

// errBatchClosed is Do's error on a Batch already closed.
var errBatchClosed = errors.New("git batch closed")

// Do writes req to git's standard input and reads its answer with read,
// which must read exactly the answer to req. The write goes on while read
// reads, so a long request cannot fill both pipes. When ctx ends first,
// git is killed. Any error (git's death, a short answer, read's own)
// closes b, and is an *Error carrying what git said on its standard error.
func (b *Batch) Do(ctx context.Context, req []byte, read func(*bufio.Reader) error) error {
	if b.err != nil {
		return b.err
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := b.in.Write(req)
		wrote <- err
	}()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			_ = b.cmd.Process.Kill()
		case <-done:
		}
	}()
	err := read(b.out)
	if werr := <-wrote; err == nil {
		err = werr
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	// git may be blocked writing an answer nobody reads: kill it.
	_ = b.cmd.Process.Kill()
	b.close()
	if ctx.Err() == nil {
		err = &Error{Args: b.args, Stderr: b.stderr.String(), Err: err}
	}
	b.err = err
	return err
}

// Close ends git (it reads the end of its input and exits) and waits for
// it.
func (b *Batch) Close() {
	if b.err == nil {
		b.close()
		b.err = errBatchClosed
	}
}

func (b *Batch) close() {
	b.in.Close()
	_ = b.cmd.Wait()
}

// lockedBuffer is a bytes.Buffer that git's stderr copier and Do may use
// at once, keeping only its last 4 KiB.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if n := l.buf.Len(); n > 4<<10 {
		l.buf.Next(n - 4<<10)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
