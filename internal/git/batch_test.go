package git_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// hashLine reads one object id.
func hashLine(id *string) func(*bufio.Reader) error {
	return func(r *bufio.Reader) error {
		line, err := r.ReadString('\n')
		*id = strings.TrimSpace(line)
		return err
	}
}

// One hash-object answers request after request with what a git started
// for each would; a request it cannot answer closes the Batch with git's
// own message, and so does a cancelled context.
func TestBatchAnswersEachRequest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := git.Run(ctx, dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	b, err := git.StartBatch(dir, git.Options{}, "hash-object", "-w", "--stdin-paths")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i, content := range []string{"one\n", "two\n", "one\n"} {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := b.Do(ctx, []byte("f.txt\n"), hashLine(&got)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		want, err := git.Line(ctx, dir, "hash-object", "f.txt")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("request %d: batch answered %q, git hash-object %q", i, got, want)
		}
	}
	var id string
	err = b.Do(ctx, []byte("missing.txt\n"), hashLine(&id))
	var ge *git.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "missing.txt") {
		t.Fatalf("a missing file: %v, want git's error naming it", err)
	}
	if err := b.Do(ctx, []byte("f.txt\n"), hashLine(&id)); err == nil {
		t.Error("a Batch that failed answered again")
	}

	// git waiting for the rest of a request that never comes: the
	// context's end kills it.
	c, err := git.StartBatch(dir, git.Options{}, "mktree", "--batch")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := c.Do(cctx, []byte("100644 blob "+strings.Repeat("0", 40)+"\tx"), hashLine(&id)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request git never finished reading: %v, want the context's deadline", err)
	}
}
