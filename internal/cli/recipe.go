package cli

import (
	"github.com/spf13/cobra"

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
			return recipe.PrintList(cmd.Context(), g.Stdout, g.Dir, opts.JSON)
		},
	}
	opts.AddFlags(cmd)
	return cmd
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
			return recipe.PrintRecipe(cmd.Context(), g.Stdout, g.Dir, args[0], opts.JSON)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}
