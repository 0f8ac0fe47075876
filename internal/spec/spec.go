// Package spec runs the spec pipeline (SPEC §11, seed 004): every spec in
// a folder goes plan → implement → verify, one fresh agent call per step.
//
//	spec ─► plan ─► implement ─► verify ─► done
//	                   ▲            │
//	                   └─ (retry) ──┤ ordinary failure: re-implement with the report
//	          ▲                     │
//	          └── (invalidate) ─────┘ PLAN_INVALIDATION: archive the plan, re-plan
//
// State lives in files inside the specs folder, next to the specs, so a
// person can read and edit it and a crash at any point resumes:
//
//	specs/plans/<id>.md             the active plan (a person may write one by hand)
//	specs/plans/<id>.json           its metadata: status, created_at_utc,
//	                                invalidated_at_utc, invalidation_reason, attempt
//	specs/plans/<id>.attempt-N.md   an invalidated plan, kept for reference
//	specs/candidates/<id>.json      an implementation that awaits verification
//	specs/done/<id>.md              verified and complete
//
// where <id> is the spec's path relative to the folder without ".md", so
// nested folders are mirrored. The store mirrors each spec's state with
// the counters and cost the files do not hold.
//
// The harness, not the agents, decides every transition: the planner's
// plan file must be non-empty and its final message must end with the
// planner's magic phrase; a planner that changes anything outside plans/
// and SCRATCHPAD.md fails and its changes are rolled back from a snapshot;
// the implementer must move HEAD, end with its phrase and pass the
// configured gates before a candidate is recorded; the verifier's final
// message must end with the pass or fail phrase.
//
// Every agent call is a fresh agent.Run whose Iteration is the role's
// attempt number for the spec (planner runs, implementer runs and verifier
// runs are counted apart, across runs, in the store), so a scripted agent
// plays entry k for a role's k-th attempt. Each call's full output goes to
// <LogDir>/runs/<spec_id>/<timestamp>/plan-attempt-N.log, impl-attempt-N.log
// and verify.log (every verification appended); ralph puts LogDir at
// .ralph/logs/specs, which git ignores and snapshots leave out, so neither
// the planner check nor an implementer's commit ever sees the logs.
package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Names of the state folders inside the specs folder. They are never
// specs themselves.
const (
	PlansDir      = "plans"
	CandidatesDir = "candidates"
	DoneDir       = "done"
)

// Scratchpad is the notes file at the workspace root the agents may read
// and the planner may write.
const Scratchpad = "SCRATCHPAD.md"

// Spec is one spec file.
type Spec struct {
	// Rel is the spec's path relative to the specs folder, with forward
	// slashes: "area/0002-bar.md".
	Rel string `json:"spec"`
	// ID is Rel without ".md": "area/0002-bar". It names the spec's state
	// files and its run logs.
	ID string `json:"id"`
}

// Layout places a spec's state files.
type Layout struct {
	// Root is the workspace root (absolute).
	Root string
	// Dir is the specs folder (absolute), inside Root.
	Dir string
}

// NewLayout returns the layout of the specs folder dir in the workspace
// root; dir may be relative to root.
func NewLayout(root, dir string) (Layout, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	dir = filepath.Clean(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return Layout{}, fmt.Errorf("specs folder %s is not inside the workspace %s", dir, root)
	}
	return Layout{Root: root, Dir: dir}, nil
}

func (l Layout) file(sub, id, ext string) string {
	return filepath.Join(l.Dir, sub, filepath.FromSlash(id)+ext)
}

// SpecPath is the spec file.
func (l Layout) SpecPath(s Spec) string { return filepath.Join(l.Dir, filepath.FromSlash(s.Rel)) }

// PlanPath is plans/<id>.md.
func (l Layout) PlanPath(s Spec) string { return l.file(PlansDir, s.ID, ".md") }

// PlanMetaPath is plans/<id>.json.
func (l Layout) PlanMetaPath(s Spec) string { return l.file(PlansDir, s.ID, ".json") }

// ArchivedPlanPath is plans/<id>.attempt-N.md.
func (l Layout) ArchivedPlanPath(s Spec, n int) string {
	return l.file(PlansDir, s.ID, fmt.Sprintf(".attempt-%d.md", n))
}

// CandidatePath is candidates/<id>.json.
func (l Layout) CandidatePath(s Spec) string { return l.file(CandidatesDir, s.ID, ".json") }

// DonePath is done/<id>.md.
func (l Layout) DonePath(s Spec) string { return l.file(DoneDir, s.ID, ".md") }

// RootRel returns path relative to the workspace root with forward
// slashes, for prompts and messages.
func (l Layout) RootRel(p string) string {
	rel, err := filepath.Rel(l.Root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// ErrNoSpecs means the specs folder holds no spec (or --only matched none).
var ErrNoSpecs = errors.New("no specs")

// Discover lists the specs in the folder: every *.md file, nested folders
// included, except the state folders plans/, candidates/ and done/ at the
// top and hidden files and folders. They come in path order.
func (l Layout) Discover() ([]Spec, error) {
	var specs []Spec
	err := filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(l.Dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel == PlansDir || rel == CandidatesDir || rel == DoneDir {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && path.Ext(rel) == ".md" {
			specs = append(specs, Spec{Rel: rel, ID: strings.TrimSuffix(rel, ".md")})
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoSpecs, l.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("list specs: %w", err)
	}
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Rel, b.Rel) })
	return specs, nil
}

// Select keeps the specs --only names: the spec whose Rel or ID is only,
// or every spec under the folder only.
func Select(specs []Spec, only string) ([]Spec, error) {
	if only == "" {
		return specs, nil
	}
	only = strings.Trim(filepath.ToSlash(only), "/")
	var out []Spec
	for _, s := range specs {
		if s.Rel == only || s.ID == only || strings.HasPrefix(s.Rel, only+"/") {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --only %q matches no spec", ErrNoSpecs, only)
	}
	return out, nil
}

// Branch is the git branch spec s is built on: BranchPrefix and its ID,
// with what a branch name cannot hold (spaces, non-ASCII letters, "..",
// a leading dash…) made dashes, and a short hash of the ID added when
// anything was replaced, so that two specs never share a branch.
func (s Spec) Branch() string {
	var b strings.Builder
	for _, part := range strings.Split(s.ID, "/") {
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		clean := strings.Map(func(r rune) rune {
			if r < 0x80 && (r == '-' || r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return '-'
		}, part)
		clean = strings.Trim(strings.ReplaceAll(clean, "..", "-"), ".-")
		if strings.HasSuffix(clean, ".lock") || clean == "" {
			clean += "-spec"
		}
		b.WriteString(clean)
	}
	name := b.String()
	if name != s.ID {
		sum := sha256.Sum256([]byte(s.ID))
		name += "-" + hex.EncodeToString(sum[:3])
	}
	return BranchPrefix + name
}
