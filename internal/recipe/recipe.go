// Package recipe holds ralph's library of section recipes (the seeds call
// them gumdrops) and looks them up by exact id.
//
// A recipe is a markdown file named ID.md whose first line is --- and which
// opens with a front matter block:
//
//	---
//	name: Hero
//	category: marketing
//	components: [Button, Badge]
//	variants:
//	  - centered
//	  - split-image
//	---
//	Markdown body: Layout, Components, Variants, Responsive behaviour,
//	Accessibility, Common mistakes.
//
// The front matter is a YAML mapping (gopkg.in/yaml.v3), written in these
// forms:
//
//	key: value            a scalar, plain, "double" or 'single' quoted
//	key: [a, b, "c, d"]   an inline list
//	key:                  a key with no value, followed by
//	  - item              block list items (indentation optional)
//	# comment             a comment, on its own line or after a space
//
// Keys are letters, digits, - and _; a key may appear once. The keys ralph
// reads are name, category (single values), components and variants (each
// a list of single values, or a comma-separated scalar); other keys are
// accepted and ignored. A plain value may hold a colon or a # that is not
// after a space ("Ratio 16:9", "C# guide"); quote one that has ": " or " #".
// Errors name the line the block stops being YAML on.
//
// Recipes are looked up in order in the project (.ralph/recipes/*.md), the
// user config dir (os.UserConfigDir()/ralph/recipes/*.md) and the library
// embedded in ralph; the first holder of an id wins. A malformed file is an
// error naming the file and the line.
package recipe

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
)

// Source of a recipe that came from the embedded library. Recipes read
// from disk carry their file path instead.
const SourceEmbedded = "embedded"

// A Recipe is one section recipe.
type Recipe struct {
	// ID is the file name without .md: the value of a plan's gumdrop prop.
	ID       string
	Name     string
	Category string
	// Components are shadcn/ui component names (Button, Card, …).
	Components []string
	Variants   []string
	// Body is the markdown after the front matter.
	Body string
	// Source is SourceEmbedded or the path of the file the recipe came from.
	Source string
}

// Parse parses the recipe file at file (a path; its base name without .md
// is the id) with contents data. Errors are *ParseError values.
func Parse(file string, data []byte) (Recipe, error) {
	id := strings.TrimSuffix(path.Base(strings.ReplaceAll(file, "\\", "/")), ".md")
	if !ValidID(id) {
		return Recipe{}, &ParseError{File: file, Msg: fmt.Sprintf("bad recipe id %q: name the file with lowercase words and digits joined by dashes, like multi-step-wizard.md", id)}
	}
	fm, body, err := splitFrontMatter(string(data))
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = file
		}
		return Recipe{}, err
	}
	r := Recipe{ID: id, Body: strings.TrimLeft(body, "\n")}
	fail := func(line int, format string, args ...any) (Recipe, error) {
		return Recipe{}, &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	for _, key := range []string{"name", "category"} {
		f, ok := fm.lookup(key)
		if !ok {
			continue
		}
		if f.isList {
			return fail(f.line, "%s must be a single value, not a list", key)
		}
		if key == "name" {
			r.Name = f.value
		} else {
			r.Category = f.value
		}
	}
	if r.Name == "" {
		return fail(1, "front matter has no name")
	}
	for _, key := range []string{"components", "variants"} {
		f, ok := fm.lookup(key)
		if !ok {
			continue
		}
		list := f.list
		if !f.isList {
			list = splitCommas(f.value)
		}
		if key == "components" {
			r.Components = list
		} else {
			r.Variants = list
		}
	}
	return r, nil
}

// splitCommas splits "a, b, c" into its non-empty trimmed parts.
func splitCommas(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ValidID reports whether id is lowercase letters and digits in words
// joined by single dashes.
func ValidID(id string) bool {
	if id == "" {
		return false
	}
	for _, w := range strings.Split(id, "-") {
		if w == "" {
			return false
		}
		for _, r := range w {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// SuggestedFile is where a plan section built from recipe id should live:
// plan.DefaultSectionFile, src/sections/<Pascal>Section.tsx. So hero →
// src/sections/HeroSection.tsx, multi-step-wizard →
// MultiStepWizardSection.tsx and cta → CtaSection.tsx (acronyms are not
// special).
func SuggestedFile(id string) string {
	return plan.DefaultSectionFile(id)
}
