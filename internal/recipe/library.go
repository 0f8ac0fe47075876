package recipe

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/ralph-harness/ralph/internal/plan"
)

//go:embed library/*.md
var embedded embed.FS

// ProjectDir is where a workspace keeps its own recipes, relative to the
// workspace root.
const ProjectDir = ".ralph/recipes"

// A Library is the set of recipes visible from one workspace, one per id.
type Library struct {
	byID map[string]Recipe
	ids  []string
}

// Load builds the library seen from workspaceDir: recipes in
// workspaceDir/.ralph/recipes first, then in the user config dir's
// ralph/recipes, then the embedded ones. A directory that does not exist is
// skipped; a malformed file is an error naming the file and line. An empty
// workspaceDir skips the project directory.
func Load(ctx context.Context, workspaceDir string) (*Library, error) {
	var dirs []string
	if workspaceDir != "" {
		dirs = append(dirs, filepath.Join(workspaceDir, filepath.FromSlash(ProjectDir)))
	}
	if cfg, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(cfg, "ralph", "recipes"))
	}
	return load(ctx, dirs)
}

// Embedded returns the library built into ralph, without project or user
// recipes.
func Embedded() (*Library, error) {
	return load(context.Background(), nil)
}

// load reads dirs in order of precedence, then the embedded library.
func load(ctx context.Context, dirs []string) (*Library, error) {
	l := &Library{byID: map[string]Recipe{}}
	for _, dir := range dirs {
		if err := l.addDir(ctx, dir); err != nil {
			return nil, err
		}
	}
	entries, err := fs.ReadDir(embedded, "library")
	if err != nil {
		return nil, fmt.Errorf("read embedded recipes: %w", err)
	}
	for _, e := range entries {
		name := "library/" + e.Name()
		data, err := embedded.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read embedded recipe: %w", err)
		}
		r, err := Parse(name, data)
		if err != nil {
			return nil, fmt.Errorf("embedded recipe: %w", err)
		}
		r.Source = SourceEmbedded
		l.add(r)
	}
	l.ids = make([]string, 0, len(l.byID))
	for id := range l.byID {
		l.ids = append(l.ids, id)
	}
	sort.Strings(l.ids)
	return l, nil
}

// addDir adds the *.md recipes in dir that no earlier directory supplied.
func (l *Library) addDir(ctx context.Context, dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read recipes: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || filepath.Ext(e.Name()) != ".md" {
			continue
		}
		file := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("read recipe: %w", err)
		}
		r, err := Parse(file, data)
		if err != nil {
			return err
		}
		r.Source = file
		l.add(r)
	}
	return nil
}

// add keeps r unless a recipe with its id is already there.
func (l *Library) add(r Recipe) {
	if _, ok := l.byID[r.ID]; !ok {
		l.byID[r.ID] = r
	}
}

// Get returns the recipe with exactly this id.
func (l *Library) Get(id string) (Recipe, bool) {
	r, ok := l.byID[id]
	return r, ok
}

// IDs returns every recipe id, sorted.
func (l *Library) IDs() []string {
	return append([]string(nil), l.ids...)
}

// List returns every recipe, sorted by id.
func (l *Library) List() []Recipe {
	out := make([]Recipe, len(l.ids))
	for i, id := range l.ids {
		out[i] = l.byID[id]
	}
	return out
}

// Nearest returns up to n of the library's ids closest to id, nearest
// first, for "did you mean" messages; plan.Suggest judges closeness, so
// that these suggestions match plan validation's.
func (l *Library) Nearest(id string, n int) []string {
	return plan.Suggest(id, l.ids, n)
}
