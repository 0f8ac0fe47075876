package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/ralph-harness/ralph/internal/failure"
)

// recipeJSON is the JSON form of a recipe in list and show output.
type recipeJSON struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Category      string   `json:"category"`
	Components    []string `json:"components"`
	Variants      []string `json:"variants"`
	SuggestedFile string   `json:"suggested_file"`
	Source        string   `json:"source"`
	Body          string   `json:"body,omitempty"`
}

func toRecipeJSON(r Recipe, body bool) recipeJSON {
	j := recipeJSON{
		ID: r.ID, Name: r.Name, Category: r.Category,
		Components: r.Components, Variants: r.Variants,
		SuggestedFile: SuggestedFile(r.ID), Source: r.Source,
	}
	if j.Components == nil {
		j.Components = []string{}
	}
	if j.Variants == nil {
		j.Variants = []string{}
	}
	if body {
		j.Body = r.Body
	}
	return j
}

// PrintList prints the recipes visible from dir as ralph recipe list
// does, as JSON with asJSON.
func PrintList(ctx context.Context, w io.Writer, dir string, asJSON bool) error {
	lib, err := Load(ctx, dir)
	if err != nil {
		return fmt.Errorf("load recipes: %w", err)
	}
	list := lib.List()
	if asJSON {
		out := make([]recipeJSON, len(list))
		for i, r := range list {
			out[i] = toRecipeJSON(r, false)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Category < list[j].Category })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCATEGORY\tSOURCE")
	for _, r := range list {
		cat := r.Category
		if cat == "" {
			cat = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, cat, displaySource(dir, r.Source))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d recipes. Show one with: ralph recipe show ID\n", len(list))
	return nil
}

// displaySource shortens a recipe file path to one relative to the
// workspace when it lies inside it.
func displaySource(dir, source string) string {
	if source == SourceEmbedded {
		return source
	}
	if rel, err := filepath.Rel(dir, source); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return source
}

// PrintRecipe prints recipe id as visible from dir, as ralph recipe show
// does, as JSON with asJSON; an unknown id is a failure.Failed error
// that names the nearest ids.
func PrintRecipe(ctx context.Context, w io.Writer, dir, id string, asJSON bool) error {
	lib, err := Load(ctx, dir)
	if err != nil {
		return fmt.Errorf("load recipes: %w", err)
	}
	r, ok := lib.Get(id)
	if !ok {
		msg := fmt.Sprintf("no recipe %q", id)
		if near := lib.Nearest(id, 3); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		} else {
			msg += "; see ralph recipe list"
		}
		return failure.New(failure.Failed, fmt.Errorf("%s", msg))
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(toRecipeJSON(r, true))
	}
	fmt.Fprintf(w, "# %s (%s)\n\n", r.Name, r.ID)
	fmt.Fprintf(w, "category:       %s\n", r.Category)
	fmt.Fprintf(w, "components:     %s\n", strings.Join(r.Components, ", "))
	fmt.Fprintf(w, "variants:       %s\n", strings.Join(r.Variants, ", "))
	fmt.Fprintf(w, "suggested file: %s\n", SuggestedFile(r.ID))
	fmt.Fprintf(w, "root element:   data-section=%q (the ui-renders gate finds the section by it)\n", r.ID)
	fmt.Fprintf(w, "source:         %s\n\n", displaySource(dir, r.Source))
	fmt.Fprint(w, strings.TrimRight(r.Body, "\n")+"\n")
	return nil
}
