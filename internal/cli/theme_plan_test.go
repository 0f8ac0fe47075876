package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/theme"
)

// TestPlanThemeCommandReproducesCSS: the command line the build
// instructions give for the theme the harness applied at PLAN → BUILD,
// run as `ralph …` in another directory, writes the same stylesheet, byte
// for byte, for every kind of <Theme>: a preset, seed and pattern, and
// every mood alone with the settings the harness chose.
func TestPlanThemeCommandReproducesCSS(t *testing.T) {
	lib, err := recipe.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	themes := []string{
		`mood="cyberpunk"`,
		`seed={212.5} pattern="goldenRatio" mood="luxury" font="Space Grotesk" chroma="0.1"`,
		`mood="playful" chroma={2} radius="none"`,
		`pattern="fibonacci"`,
		``,
	}
	for _, m := range theme.Moods() {
		themes = append(themes, fmt.Sprintf("mood=%q", m.Name))
	}
	for _, props := range themes {
		t.Run(props, func(t *testing.T) {
			src := fmt.Sprintf("<App name=\"Reproduce\">\n  <Theme %s />\n  <Screen name=\"home\"><Section gumdrop=\"hero\" /></Screen>\n</App>\n", props)
			root, err := plan.Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if res := plan.Validate(root, plancontext.Registries(lib)); !res.OK() {
				t.Fatalf("plan does not validate: %+v", res.Failures)
			}
			harness := t.TempDir()
			c := plancontext.Resolve(context.Background(), root, plancontext.Options{Dir: harness, Recipes: lib})
			if !c.Theme.Applied {
				t.Fatalf("theme = %+v", c.Theme)
			}
			person := t.TempDir()
			var stdout, stderr bytes.Buffer
			if code := Main(append([]string{"-C", person}, c.Theme.Argv...), nil, &stdout, &stderr); code != 0 {
				t.Fatalf("%s: exit %d\n%s", c.Theme.Command, code, stderr.String())
			}
			want, err := os.ReadFile(filepath.Join(harness, "src/index.css"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(person, "src/index.css"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s wrote a different stylesheet than the harness applied", c.Theme.Command)
			}
			if stdout.String() != c.Theme.Output {
				t.Errorf("%s printed %q; the build instructions quote %q", c.Theme.Command, stdout.String(), c.Theme.Output)
			}
		})
	}
}
