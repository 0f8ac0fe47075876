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
	"strings"
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

// Nearest returns up to n of the library's ids closest to id, for "did you
// mean" messages.
func (l *Library) Nearest(id string, n int) []string {
	return Nearest(id, l.ids, n)
}

// Nearest returns up to n of candidates closest to id: those within an
// edit distance of max(2, len(id)/3), and those that contain id or are
// contained in it, nearest first, ties by name.
func Nearest(id string, candidates []string, n int) []string {
	limit := max(2, len(id)/3)
	type scored struct {
		id   string
		dist int
	}
	var hits []scored
	for _, c := range candidates {
		d := editDistance(id, c)
		if d > limit && !(id != "" && (contains(c, id) || contains(id, c))) {
			continue
		}
		hits = append(hits, scored{c, d})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		return hits[i].id < hits[j].id
	})
	out := []string{}
	for i := 0; i < len(hits) && i < n; i++ {
		out = append(out, hits[i].id)
	}
	return out
}

// contains reports whether s holds sub, for subs of 3 bytes or more.
func contains(s, sub string) bool {
	return len(sub) >= 3 && strings.Contains(s, sub)
}

// editDistance is the Levenshtein distance between a and b, by byte.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
