package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readExample(t *testing.T, name string) *Node {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, string(src))
}

func TestSectionsInDocumentOrder(t *testing.T) {
	root := readExample(t, "app.tsx")
	var ids []string
	for _, s := range Sections(root) {
		ids = append(ids, s.Str("gumdrop"))
	}
	want := []string{"hero", "features", "faq", "testimonials", "cta", "data-table", "form-layout", "empty-state"}
	if !cmp.Equal(ids, want) {
		t.Errorf("Sections = %v, want %v", ids, want)
	}
	if th := Theme(root); th == nil || th.Str("mood") != "editorial" {
		t.Errorf("Theme = %+v", th)
	}
	if n := len(Collect(root, "Field")); n != 7 {
		t.Errorf("Collect(Field) = %d, want 7", n)
	}
	sec := Sections(root)[0]
	path := Path(root, sec)
	if len(path) != 4 || path[1].Component != "Screen" || path[2].Component != "Content" {
		t.Errorf("Path = %v", path)
	}
}

func TestSteps(t *testing.T) {
	root := readExample(t, "orchestration.tsx")
	var got []string
	for _, s := range Steps(root) {
		phase := ""
		if s.Phase != nil {
			phase = s.Phase.Str("name")
		}
		got = append(got, phase+"/"+s.Node.Component+":"+s.Node.Str("name"))
	}
	want := []string{"Review/Step:audit", "Review/Human:", "Fix/Step:tokens", "Fix/Step:tests", "Fix/Human:", "Fix/Stop:", "Never runs/Step:deploy"}
	if !cmp.Equal(got, want) {
		t.Errorf("Steps = %v\nwant %v", got, want)
	}
	if p := Persona(root); p != "Senior security engineer who prefers small, reviewable changes" {
		t.Errorf("Persona(root) = %q", p)
	}
	if c := Constraints(root); !cmp.Equal(c, []string{"No new dependencies", "Keep the public API unchanged"}) {
		t.Errorf("Constraints(root) = %q", c)
	}
	tokens := Steps(root)[2].Node
	if Persona(tokens) != "Cryptography reviewer" || !cmp.Equal(Constraints(tokens), []string{"Use crypto/rand only"}) {
		t.Errorf("step persona %q constraints %q", Persona(tokens), Constraints(tokens))
	}
	if tokens.Text != "Replace the session token generator with 32 random bytes." {
		t.Errorf("step text = %q", tokens.Text)
	}
	if audit := Steps(root)[0].Node; audit.Text != "Read the login handler and list every way a session can be forged.\nWrite the list to notes/audit.md." {
		t.Errorf("audit text = %q", audit.Text)
	}
}
