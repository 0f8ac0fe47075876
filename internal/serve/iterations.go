package serve

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
)

// iterChange is what one iteration changed in the tree: from the tree
// the iteration before it left (for the first, the tree the task's start
// left, or task-N-pre's for a task from before those were kept) to its
// own.
type iterChange struct {
	snapshot.DiffStat
	Task, Number int
	// From and To are the trees compared.
	From, To string
}

// maxIterationDiff caps the text an iteration's diff page shows.
const maxIterationDiff = 400 << 10

// iterationChanges measures what each iteration of task n changed, by
// iteration number; an iteration that recorded no tree (one from before
// ralph kept them, or one cut short) is left out and the next is measured
// from the last one that did. Trees never change, so a pair once measured
// is kept.
func (s *Server) iterationChanges(ctx context.Context, n int, its []store.Iteration) map[int]iterChange {
	out := map[int]iterChange{}
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		return out
	}
	prev := repo.IterationBase(ctx, n)
	if prev == "" {
		if pre, err := repo.Resolve(ctx, snapshot.TaskPre(n)); err == nil {
			prev = pre.Tree
		}
	}
	for _, it := range its {
		if it.Tree == "" {
			continue
		}
		key := prev + ".." + it.Tree
		s.changes.mu.Lock()
		st, ok := s.changes.trees[key]
		s.changes.mu.Unlock()
		if !ok {
			if st, err = repo.StatTrees(ctx, prev, it.Tree); err != nil {
				s.log.Warn("iteration diff stat", "task", n, "iteration", it.Number, "err", err)
				continue
			}
			s.changes.mu.Lock()
			if len(s.changes.trees) > 10_000 {
				clear(s.changes.trees)
			}
			s.changes.trees[key] = st
			s.changes.mu.Unlock()
		}
		out[it.Number] = iterChange{DiffStat: st, Task: n, Number: it.Number, From: prev, To: it.Tree}
		prev = it.Tree
	}
	return out
}

// iterationDiffData is the diff page of one iteration.
type iterationDiffData struct {
	Change iterChange
	Files  []iterationFile
}

// iterationFile is one file an iteration changed, with its diff lines;
// Hidden is set for a file the page may not show without the token.
type iterationFile struct {
	snapshot.FileChange
	Hidden bool
	Lines  []diffLine
}

// pageIterationDiff shows what iteration N of task T changed:
// /iterations/{task}/{n}.
func (s *Server) pageIterationDiff(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	task, err1 := strconv.Atoi(r.PathValue("task"))
	n, err2 := strconv.Atoi(r.PathValue("n"))
	if err1 != nil || err2 != nil || task < 1 || n < 1 {
		s.htmlError(w, r, http.StatusBadRequest, "an iteration is /iterations/TASK/N with two numbers")
		return
	}
	st, err := s.store(ctx)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var its []store.Iteration
	if t, err := st.TaskByNumber(ctx, task); err == nil {
		its, _ = st.Iterations(ctx, t.ID)
	}
	c, ok := s.iterationChanges(ctx, task, its)[n]
	if !ok {
		s.htmlError(w, r, http.StatusNotFound, "task "+strconv.Itoa(task)+" has no recorded iteration "+strconv.Itoa(n))
		return
	}
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	changes, texts, err := repo.DiffTrees(ctx, c.From, c.To, maxIterationDiff)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	d := iterationDiffData{Change: c}
	for _, fc := range changes {
		f := iterationFile{FileChange: fc, Hidden: !s.showable(r, fc.Path)}
		if !f.Hidden {
			f.Lines = unifiedLines(texts[fc.Path])
		}
		d.Files = append(d.Files, f)
	}
	p := s.base(ctx, r, "events", "Task "+strconv.Itoa(task)+", iteration "+strconv.Itoa(n))
	p.Data = d
	s.render(w, http.StatusOK, "iteration", "", p)
}

// unifiedLines turns git's unified diff of one file into diff lines,
// its header left out.
func unifiedLines(text string) []diffLine {
	var out []diffLine
	body := false
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(l, "@@") {
			body = true
			out = append(out, diffLine{Op: "@", Text: l})
			continue
		}
		if !body || l == "" {
			continue
		}
		op := l[:1]
		if op != "+" && op != "-" {
			op = " "
		}
		out = append(out, diffLine{Op: op, Text: strings.TrimPrefix(l, l[:1])})
	}
	return out
}
