package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// SectionsDir is where section source files live, relative to the project.
const SectionsDir = "src/sections"

// PascalCase turns a recipe id into a component name: multi-step-wizard →
// MultiStepWizard.
func PascalCase(id string) string {
	var b strings.Builder
	upper := true
	for _, r := range id {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DefaultSectionFile is the suggested source file of a section built from
// recipe id: src/sections/<Pascal(id)>Section.tsx.
func DefaultSectionFile(id string) string {
	return path.Join(SectionsDir, PascalCase(id)+"Section.tsx")
}

// SectionFile returns a section's source file, slash-separated and
// relative to the project: its file prop, else DefaultSectionFile of its
// gumdrop; "" when it has neither.
func SectionFile(section *Node) string {
	if f := section.Str("file"); f != "" {
		return path.Clean(strings.TrimPrefix(filepath.ToSlash(f), "./"))
	}
	if g := section.Str("gumdrop"); g != "" {
		return DefaultSectionFile(g)
	}
	return ""
}

// MissingSection is a section whose source file does not exist.
type MissingSection struct {
	Section *Node
	File    string
}

// DiffResult compares a plan with the project that implements it.
type DiffResult struct {
	// Missing are sections without a source file, in document order.
	Missing []MissingSection
	// Unplanned are source files under src/sections/ that no section names,
	// slash-separated and relative to the project, sorted.
	Unplanned []string
}

// Empty reports whether plan and implementation agree.
func (d DiffResult) Empty() bool { return len(d.Missing) == 0 && len(d.Unplanned) == 0 }

// Diff compares the sections of the plan with the source files of the
// project in dir. Source files are .tsx, .jsx, .ts and .js files under
// src/sections/, except tests, stories and index files.
func Diff(root *Node, dir string) (DiffResult, error) {
	var res DiffResult
	planned := map[string]bool{}
	for _, s := range Sections(root) {
		f := SectionFile(s)
		if f == "" {
			continue
		}
		planned[f] = true
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			res.Missing = append(res.Missing, MissingSection{Section: s, File: f})
		case err != nil:
			return DiffResult{}, fmt.Errorf("plan diff: %w", err)
		}
	}
	base := filepath.Join(dir, filepath.FromSlash(SectionsDir))
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == base {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !isSectionSource(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !planned[rel] {
			res.Unplanned = append(res.Unplanned, rel)
		}
		return nil
	})
	if err != nil {
		return DiffResult{}, fmt.Errorf("plan diff: %w", err)
	}
	sort.Strings(res.Unplanned)
	return res, nil
}

// isSectionSource reports whether a file name is a section's source.
func isSectionSource(name string) bool {
	ext := path.Ext(name)
	switch ext {
	case ".tsx", ".jsx", ".ts", ".js":
	default:
		return false
	}
	stem := strings.TrimSuffix(name, ext)
	if stem == "index" || strings.HasSuffix(stem, ".d") {
		return false
	}
	for _, s := range []string{".test", ".spec", ".stories"} {
		if strings.HasSuffix(stem, s) {
			return false
		}
	}
	return true
}
