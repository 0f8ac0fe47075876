package api

import (
	"path/filepath"
	"strings"
	"testing"
)

// noUserRecipes points the user config dir at an empty directory, so that
// only the workspace's and the embedded recipes are seen.
func noUserRecipes(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "config"))
}

func TestRecipeShow(t *testing.T) {
	noUserRecipes(t)
	tb, _ := newToolbox(t)
	out, err := call(t, tb, "recipe_show", map[string]any{"id": "hero"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Hero (hero)", "category:       marketing", "components:     Button", "source:         embedded", "one primary action"} {
		if !strings.Contains(out, want) {
			t.Errorf("recipe_show hero does not say %q:\n%s", want, out)
		}
	}

	out, err = call(t, tb, "recipe_show", map[string]any{"id": "heor"})
	wantErr(t, out, err, `no recipe "heor"; did you mean hero`)
	out, err = call(t, tb, "recipe_show", map[string]any{"id": "zzzzzzzzzzzz"})
	wantErr(t, out, err, "recipe_list lists the ids")
	out, err = call(t, tb, "recipe_show", map[string]any{})
	wantErr(t, out, err, "id is empty")
}

// A workspace recipe takes the place of the embedded one of the same id.
func TestRecipeShowProjectRecipe(t *testing.T) {
	noUserRecipes(t)
	tb, dir := newToolbox(t)
	write(t, dir, ".ralph/recipes/hero.md", "---\nname: Our Hero\ncategory: marketing\ncomponents: [Button]\n---\nThe house hero.\n")
	out, err := call(t, tb, "recipe_show", map[string]any{"id": "hero"})
	if err != nil || !strings.Contains(out, "# Our Hero (hero)") || !strings.Contains(out, "source:         .ralph/recipes/hero.md") ||
		!strings.Contains(out, "The house hero.") {
		t.Errorf("project recipe: %v\n%s", err, out)
	}
	write(t, dir, ".ralph/recipes/broken.md", "no front matter\n")
	out, err = call(t, tb, "recipe_show", map[string]any{"id": "hero"})
	wantErr(t, out, err, "load recipes: ")
}

func TestRecipeList(t *testing.T) {
	noUserRecipes(t)
	tb, _ := newToolbox(t)
	out, err := call(t, tb, "recipe_list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var marketing string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "marketing: ") {
			marketing = line
		}
	}
	if !strings.Contains(marketing, "hero") || !strings.Contains(marketing, "cta") {
		t.Errorf("no marketing line with hero and cta:\n%s", out)
	}
	if !strings.Contains(out, " recipes; recipe_show ID shows one") || strings.Contains(out, "api-crud, hero") {
		t.Errorf("recipe_list:\n%s", out)
	}
}
