package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/recipe"
)

func newRecipeCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recipe",
		Short: "List and show the section recipes plans build from",
		Long: `Recipes are markdown guides for building one kind of section (hero,
pricing, data-table, api-crud, …). A plan's <Section gumdrop="ID"> names one
by exact id; at PLAN → BUILD ralph puts the recipe into the build
instructions.

ralph looks for ID.md in .ralph/recipes/ of the workspace, then in the user
config dir's ralph/recipes/, then in the library built into ralph; the first
one found wins.`,
	}
	cmd.AddCommand(newRecipeListCommand(g), newRecipeShowCommand(g))
	return cmd
}

// RecipeListOptions are the flags of ralph recipe list.
type RecipeListOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *RecipeListOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the recipes as a JSON array")
}

func newRecipeListCommand(g *Globals) *cobra.Command {
	var opts RecipeListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the recipes visible from this workspace, by category",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecipeList(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

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

func toRecipeJSON(r recipe.Recipe, body bool) recipeJSON {
	j := recipeJSON{
		ID: r.ID, Name: r.Name, Category: r.Category,
		Components: r.Components, Variants: r.Variants,
		SuggestedFile: recipe.SuggestedFile(r.ID), Source: r.Source,
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

func runRecipeList(ctx context.Context, g *Globals, opts RecipeListOptions) error {
	lib, err := recipe.Load(ctx, g.Dir)
	if err != nil {
		return fmt.Errorf("load recipes: %w", err)
	}
	list := lib.List()
	if opts.JSON {
		out := make([]recipeJSON, len(list))
		for i, r := range list {
			out[i] = toRecipeJSON(r, false)
		}
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Category < list[j].Category })
	tw := tabwriter.NewWriter(g.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCATEGORY\tSOURCE")
	for _, r := range list {
		cat := r.Category
		if cat == "" {
			cat = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, cat, displaySource(g, r.Source))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "\n%d recipes. Show one with: ralph recipe show ID\n", len(list))
	return nil
}

// displaySource shortens a recipe file path to one relative to the
// workspace when it lies inside it.
func displaySource(g *Globals, source string) string {
	if source == recipe.SourceEmbedded {
		return source
	}
	if rel, err := filepath.Rel(g.Dir, source); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return source
}

// RecipeShowOptions are the flags of ralph recipe show.
type RecipeShowOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *RecipeShowOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the recipe as a JSON object")
}

func newRecipeShowCommand(g *Globals) *cobra.Command {
	var opts RecipeShowOptions
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print one recipe: its front matter, suggested file and body",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecipeShow(cmd.Context(), g, args[0], opts)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func runRecipeShow(ctx context.Context, g *Globals, id string, opts RecipeShowOptions) error {
	lib, err := recipe.Load(ctx, g.Dir)
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
	if opts.JSON {
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(toRecipeJSON(r, true))
	}
	w := g.Stdout
	fmt.Fprintf(w, "# %s (%s)\n\n", r.Name, r.ID)
	fmt.Fprintf(w, "category:       %s\n", r.Category)
	fmt.Fprintf(w, "components:     %s\n", strings.Join(r.Components, ", "))
	fmt.Fprintf(w, "variants:       %s\n", strings.Join(r.Variants, ", "))
	fmt.Fprintf(w, "suggested file: %s\n", recipe.SuggestedFile(r.ID))
	fmt.Fprintf(w, "source:         %s\n\n", displaySource(g, r.Source))
	fmt.Fprint(w, strings.TrimRight(r.Body, "\n")+"\n")
	return nil
}
