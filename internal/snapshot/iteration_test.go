package snapshot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each iteration's tree joins the task's chain, outside the snapshots; its
// change is measured without ralph's own bookkeeping in .ralph/.
func TestSaveIterationChain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a\n")
	write(".ralph/iteration.txt", "0")
	base, err := r.SaveIteration(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a\nb\n")
	write(".ralph/iteration.txt", "1")
	write(".ralph/plan.tsx", "<App/>\n")
	one, err := r.SaveIteration(ctx, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IterationBase(ctx, 1); got != base {
		t.Errorf("IterationBase = %q, want %q", got, base)
	}
	st, err := r.StatTrees(ctx, base, one)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 2 || st.Added != 2 || st.Deleted != 0 {
		t.Errorf("stat = %+v, want a.txt +1 and plan.tsx +1 (iteration.txt left out)", st)
	}
	changes, texts, err := r.DiffTrees(ctx, base, one, 1<<20)
	if err != nil || len(changes) != 2 || !strings.Contains(texts["a.txt"], "+b") {
		t.Errorf("diff = %+v %q %v", changes, texts, err)
	}
	// A later task with the same number (after a rollback) measures from
	// its own start.
	write("c.txt", "c\n")
	again, err := r.SaveIteration(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IterationBase(ctx, 1); got != again {
		t.Errorf("IterationBase after a second start = %q, want %q", got, again)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("iterations show as snapshots: %+v %v", list, err)
	}
	out, err := exec.Command("git", "-C", dir, "rev-list", "--count", IterationRefPrefix+"task-1").Output()
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Errorf("chain = %q %v, want 3 commits", out, err)
	}
}

// BenchmarkSaveIteration is what keeping an iteration's tree costs the
// loop, over a committed project of 2,000 files with one file changed
// between iterations.
func BenchmarkSaveIteration(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	for i := range 2000 {
		p := filepath.Join(dir, "src", fmt.Sprintf("p%d", i%40), fmt.Sprintf("f%d.go", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(fmt.Sprintf("package p\n\nvar X%d = %d\n", i, i)), 0o644)
	}
	r, err := Open(ctx, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.SaveIteration(ctx, 1, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		_ = os.WriteFile(filepath.Join(dir, "src", "p0", "f0.go"), []byte(fmt.Sprintf("package p\n\nvar X0 = %d\n", i)), 0o644)
		if _, err := r.SaveIteration(ctx, 1, i+1); err != nil {
			b.Fatal(err)
		}
	}
}
