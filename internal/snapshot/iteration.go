package snapshot

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// IterationRefPrefix holds, per task, the chain of its iterations' trees
// (refs/ralph/iterations/task-N): one commit an iteration, so the trees
// the dashboard diffs stay reachable. They are not snapshots: List never
// shows them and nothing rolls back to them.
const IterationRefPrefix = "refs/ralph/iterations/"

// emptyTree is git's empty tree, the state before a first snapshot.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// SaveIteration records the working tree as it is after iteration n of
// task (ralph's private files left out, as in every snapshot) and returns
// its tree id. Recording the same tree twice costs one write-tree.
func (r *Repo) SaveIteration(ctx context.Context, task, n int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, err := r.currentTree(ctx)
	if err != nil {
		return "", fmt.Errorf("record iteration %d: %w", n, err)
	}
	ref := fmt.Sprintf("%stask-%d", IterationRefPrefix, task)
	args := []string{"commit-tree", "--no-gpg-sign", tree, "-m", fmt.Sprintf("task %d iteration %d", task, n)}
	parent, known := r.iterTips[ref]
	if !known {
		if out, err := r.git(ctx, nil, nil, "rev-parse", "-q", "--verify", ref+"^{commit}"); err == nil {
			parent = strings.TrimSpace(string(out))
		}
	}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	date := fmt.Sprintf("%d +0000", r.now().Unix())
	out, err := r.git(ctx, nil, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, args...)
	if err != nil {
		return "", fmt.Errorf("record iteration %d: %w", n, err)
	}
	commit := strings.TrimSpace(string(out))
	if _, err := r.git(ctx, nil, nil, "update-ref", "-m", "ralph iteration", ref, commit); err != nil {
		return "", fmt.Errorf("record iteration %d: %w", n, err)
	}
	if r.iterTips == nil {
		r.iterTips = map[string]string{}
	}
	r.iterTips[ref] = commit
	return tree, nil
}

// IterationBase is the tree task's latest iteration 0 recorded
// (SaveIteration with n = 0, as the task's loop starts: the tree as the
// task's start left it), "" when there is none. The latest: a rollback
// can give a new task a number an old one had, and the chain goes on.
func (r *Repo) IterationBase(ctx context.Context, task int) string {
	ref := fmt.Sprintf("%stask-%d", IterationRefPrefix, task)
	out, err := r.git(ctx, nil, nil, "log", "--format=%T %s", ref, "--")
	if err != nil {
		return ""
	}
	want := fmt.Sprintf("task %d iteration 0", task)
	for _, line := range strings.Split(string(out), "\n") {
		if tree, subject, ok := strings.Cut(line, " "); ok && subject == want {
			return tree
		}
	}
	return ""
}

// StatTrees is the size of the change from tree a to tree b ("" is the
// empty tree).
func (r *Repo) StatTrees(ctx context.Context, a, b string) (DiffStat, error) {
	out, err := r.git(ctx, nil, nil, append([]string{"diff-tree", "-r", "-z", "--numstat", "--no-renames", orEmpty(a), orEmpty(b), "--", "."}, harnessFiles...)...)
	if err != nil {
		return DiffStat{}, fmt.Errorf("diff stat: %w", err)
	}
	return parseNumStat(out), nil
}

// DiffTrees lists the files that differ from tree a to tree b, and the
// unified diff of each (cut at max bytes in all), by path.
func (r *Repo) DiffTrees(ctx context.Context, a, b string, max int) ([]FileChange, map[string]string, error) {
	out, err := r.git(ctx, nil, nil, append([]string{"diff-tree", "-r", "-z", "--name-status", "--no-renames", orEmpty(a), orEmpty(b), "--", "."}, harnessFiles...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("diff: %w", err)
	}
	changes := parseNameStatus(out)
	texts := map[string]string{}
	for _, c := range changes {
		if max <= 0 {
			break
		}
		d, err := r.git(ctx, nil, nil, "diff", "--no-color", "--no-ext-diff", "--no-renames", orEmpty(a), orEmpty(b), "--", c.Path)
		if err != nil {
			continue
		}
		text := string(d)
		if len(text) > max {
			text = text[:max] + "\n… (cut)"
		}
		max -= len(text)
		texts[c.Path] = text
	}
	return changes, texts, nil
}

// harnessFiles leave the harness's own bookkeeping in .ralph/ out of an
// iteration's diff: it changes every iteration and is not the agent's
// work (plan.tsx and summary.md are, and stay in).
var harnessFiles = func() []string {
	var ex []string
	for _, name := range []string{workspace.Feedback, workspace.Status, workspace.Phase, workspace.Iteration,
		workspace.Task, workspace.Origin, workspace.TaskCounter, workspace.TaskHistory} {
		ex = append(ex, ":(exclude)"+workspace.Dir+"/"+name)
	}
	return ex
}()

func orEmpty(tree string) string {
	if tree == "" {
		return emptyTree
	}
	return tree
}
