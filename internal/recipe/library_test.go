package recipe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// isolate points the user config dir at an empty temporary directory and
// returns the ralph/recipes directory inside it.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("AppData", filepath.Join(home, "AppData"))
	cfg, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(cfg, "ralph", "recipes")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadEmbedded(t *testing.T) {
	isolate(t)
	lib, err := Load(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := lib.Get("hero")
	if !ok {
		t.Fatal("no hero recipe")
	}
	if r.Source != SourceEmbedded || r.ID != "hero" || !slices.Contains(r.Components, "Button") {
		t.Errorf("hero = %+v", r)
	}
	if strings.HasPrefix(r.Body, "---") {
		t.Errorf("body still has front matter: %q", r.Body[:40])
	}
	if _, ok := lib.Get("Hero"); ok {
		t.Error(`Get("Hero") found a recipe; lookup must be exact`)
	}
	if _, ok := lib.Get("her"); ok {
		t.Error(`Get("her") found a recipe; lookup must be exact`)
	}
	ids := lib.IDs()
	if !slices.IsSorted(ids) {
		t.Errorf("IDs not sorted: %v", ids)
	}
	list := lib.List()
	if len(list) != len(ids) {
		t.Fatalf("List has %d recipes, IDs %d", len(list), len(ids))
	}
	for i, r := range list {
		if r.ID != ids[i] {
			t.Errorf("List()[%d] = %s, IDs()[%d] = %s", i, r.ID, i, ids[i])
		}
	}
}

func TestProjectOverridesEmbedded(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	file := filepath.Join(ws, ".ralph", "recipes", "hero.md")
	writeFile(t, file, "---\nname: Our hero\ncomponents: [Card]\nvariants: [ours]\n---\nproject body\n")
	writeFile(t, filepath.Join(ws, ".ralph", "recipes", "notes.txt"), "not a recipe")
	writeFile(t, filepath.Join(ws, ".ralph", "recipes", "brand-banner.md"), "---\nname: Banner\n---\nnew\n")
	lib, err := Load(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := lib.Get("hero")
	if r.Name != "Our hero" || r.Body != "project body\n" || r.Source != file {
		t.Errorf("hero = %+v, want the project recipe from %s", r, file)
	}
	if _, ok := lib.Get("brand-banner"); !ok {
		t.Error("project-only recipe brand-banner missing")
	}
	if !slices.Contains(lib.IDs(), "brand-banner") {
		t.Error("IDs lacks brand-banner")
	}
	if r, _ := lib.Get("faq"); r.Source != SourceEmbedded {
		t.Errorf("faq source = %q, want embedded", r.Source)
	}
}

func TestUserOverridesEmbedded(t *testing.T) {
	userDir := isolate(t)
	ws := t.TempDir()
	userHero := filepath.Join(userDir, "hero.md")
	writeFile(t, userHero, "---\nname: User hero\n---\nuser\n")
	writeFile(t, filepath.Join(userDir, "cta.md"), "---\nname: User cta\n---\nuser\n")
	projectCTA := filepath.Join(ws, ".ralph", "recipes", "cta.md")
	writeFile(t, projectCTA, "---\nname: Project cta\n---\nproject\n")
	lib, err := Load(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := lib.Get("hero"); r.Name != "User hero" || r.Source != userHero {
		t.Errorf("hero = %+v, want the user recipe", r)
	}
	if r, _ := lib.Get("cta"); r.Name != "Project cta" || r.Source != projectCTA {
		t.Errorf("cta = %+v, want the project recipe over the user one", r)
	}
}

func TestLoadMalformedProjectRecipe(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	file := filepath.Join(ws, ".ralph", "recipes", "hero.md")
	writeFile(t, file, "---\nname: Hero\ncomponents: [Button\n---\n")
	_, err := Load(context.Background(), ws)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Load error = %v, want a *ParseError", err)
	}
	if pe.File != file || pe.Line != 3 {
		t.Errorf("error at %s:%d, want %s:3", pe.File, pe.Line, file)
	}
	if !strings.Contains(err.Error(), file+":3:") {
		t.Errorf("error %q does not name file and line", err)
	}
}

func TestLoadMalformedUserRecipe(t *testing.T) {
	userDir := isolate(t)
	writeFile(t, filepath.Join(userDir, "hero.md"), "no front matter\n")
	_, err := Load(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(userDir, "hero.md")+":1:") {
		t.Fatalf("Load error = %v, want one naming the user file and line 1", err)
	}
}

func TestLoadCancelled(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".ralph", "recipes", "hero.md"), "---\nname: Hero\n---\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, ws); !errors.Is(err, context.Canceled) {
		t.Errorf("Load error = %v, want context.Canceled", err)
	}
}
