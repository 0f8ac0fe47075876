package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that the parser never panics or loops, that every
// error is a positioned *SyntaxError, and that whatever parses can be
// validated, shown and marshalled.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"app.tsx", "orchestration.tsx", "mutation.tsx"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(strings.Repeat("<A>", 10000)))
	f.Add([]byte("<A p={" + strings.Repeat("[{a:", 300)))
	reg := DefaultRegistries()
	f.Fuzz(func(t *testing.T, src []byte) {
		root, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError: %v", err, err)
			}
			if se.Line < 1 || se.Col < 1 || se.Msg == "" {
				t.Fatalf("error without a position or message: %#v", se)
			}
			if root != nil {
				t.Fatal("root returned with an error")
			}
			return
		}
		root.Walk(func(n *Node) bool {
			if n.Line < 1 || n.Col < 1 || n.Component == "" {
				t.Fatalf("node without position or name: %+v", n)
			}
			return true
		})
		Validate(root, reg)
		Sections(root)
		Steps(root)
		if _, err := json.Marshal(root); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}
