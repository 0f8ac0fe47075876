package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/recipe"
)

// recipeToolDefs are the tools over ralph's recipe library.
var recipeToolDefs = []toolDef{
	{
		Name:        "recipe_show",
		Description: "Show one section recipe (a guide for building one kind of section: hero, pricing, data-table, api-crud, …): its category, components, variants, suggested file and body. A plan's <Section gumdrop=\"ID\"> names a recipe by this id.",
		Properties: map[string]any{
			"id": str("recipe id, e.g. hero or multi-step-wizard (see recipe_list)"),
		},
		Required: []string{"id"},
	},
	{
		Name:        "recipe_list",
		Description: "List the ids of the section recipes visible from the workspace (its .ralph/recipes/, the user's, then ralph's built-in library), grouped by category.",
		Properties:  map[string]any{},
	},
}

func (t *toolbox) recipes(ctx context.Context) (*recipe.Library, error) {
	lib, err := recipe.Load(ctx, t.ws.root)
	if err != nil {
		return nil, fmt.Errorf("load recipes: %v", err)
	}
	return lib, nil
}

func (t *toolbox) recipeShow(ctx context.Context, id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", errors.New("id is empty: give a recipe id (recipe_list lists them)")
	}
	lib, err := t.recipes(ctx)
	if err != nil {
		return "", err
	}
	r, ok := lib.Get(id)
	if !ok {
		if near := lib.Nearest(id, 3); len(near) > 0 {
			return "", fmt.Errorf("no recipe %q; did you mean %s?", id, strings.Join(near, ", "))
		}
		return "", fmt.Errorf("no recipe %q; recipe_list lists the ids", id)
	}
	source := r.Source
	if source != recipe.SourceEmbedded {
		source = t.ws.rel(source)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s)\n\n", r.Name, r.ID)
	fmt.Fprintf(&b, "category:       %s\n", r.Category)
	fmt.Fprintf(&b, "components:     %s\n", strings.Join(r.Components, ", "))
	fmt.Fprintf(&b, "variants:       %s\n", strings.Join(r.Variants, ", "))
	fmt.Fprintf(&b, "suggested file: %s\n", recipe.SuggestedFile(r.ID))
	fmt.Fprintf(&b, "source:         %s\n\n", source)
	b.WriteString(strings.TrimRight(r.Body, "\n") + "\n")
	return b.String(), nil
}

func (t *toolbox) recipeList(ctx context.Context) (string, error) {
	lib, err := t.recipes(ctx)
	if err != nil {
		return "", err
	}
	byCat := map[string][]string{}
	for _, r := range lib.List() {
		cat := r.Category
		if cat == "" {
			cat = "uncategorised"
		}
		byCat[cat] = append(byCat[cat], r.ID)
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	var b strings.Builder
	for _, c := range cats {
		fmt.Fprintf(&b, "%s: %s\n", c, strings.Join(byCat[c], ", "))
	}
	fmt.Fprintf(&b, "%d recipes; recipe_show ID shows one\n", len(lib.IDs()))
	return b.String(), nil
}
