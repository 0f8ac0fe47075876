package task

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRequirementCheck reads a requirement's own check from task.md as an
// argv, never a shell string, and rejects one that cannot run with the
// line it is on.
func TestRequirementCheck(t *testing.T) {
	const head = "# Task: CTA\nType: bugfix\n\n## Requirements\n"
	for _, tc := range []struct {
		line string
		want Requirement
	}{
		{`- [FIX] the CTA links to /signup — check: ["npm", "test", "--", "cta"]`,
			Requirement{Kind: Fix, Text: "the CTA links to /signup", Check: []string{"npm", "test", "--", "cta"}}},
		{`- [FIX] quoting stays argv — check: ["sh", "-c", "echo $HOME; rm -rf /"]`,
			Requirement{Kind: Fix, Text: "quoting stays argv", Check: []string{"sh", "-c", "echo $HOME; rm -rf /"}}},
		{`- [MODIFY] a dash — not a check: it has no array`,
			Requirement{Kind: Modify, Text: "a dash — not a check: it has no array"}},
		{`- [FIX] the hero — check: the copy`,
			Requirement{Kind: Fix, Text: "the hero — check: the copy"}},
		{`- [FIX] — check: ["make"]`,
			Requirement{Kind: Fix, Check: []string{"make"}}},
	} {
		got, err := Parse([]byte(head + tc.line + "\n"))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.line, err)
			continue
		}
		if !cmp.Equal(got.Requirements, []Requirement{tc.want}) {
			t.Errorf("Parse(%q) requirements = %#v, want %#v", tc.line, got.Requirements, tc.want)
		}
		back, err := Parse(Format(got))
		if err != nil || !cmp.Equal(back, got) {
			t.Errorf("round trip of %q: %v\n%s", tc.line, err, Format(got))
		}
	}
	for line, want := range map[string]string{
		`- [FIX] x — check: npm test`:       "", // not an array: plain text
		`- [FIX] x — check: ["npm" "test"]`: "line 5: requirement [FIX]: check must be a JSON array of strings",
		`- [FIX] x — check: []`:             "line 5: requirement [FIX]: check must name a program: the argv is empty",
		`- [FIX] x — check: [""]`:           "line 5: requirement [FIX]: check must name a program: argv[0] is empty",
		`- [FIX] x — check: [1, 2]`:         "line 5: requirement [FIX]: check must be a JSON array of strings",
		`- [FIX] x — check: ["a"] and more`: "line 5: requirement [FIX]: unexpected text after the check's argv",
		`- [FIX] x — check: ["a\u0000b"]`:   "line 5: requirement [FIX]: check argv[0] contains a NUL byte",
	} {
		_, err := Parse([]byte(head + line + "\n"))
		switch {
		case want == "" && err != nil:
			t.Errorf("Parse(%q): %v, want no error", line, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("Parse(%q) error = %v, want %q…", line, err, want)
		}
	}
	bad := Task{Type: Bugfix, Requirements: []Requirement{{Kind: Fix, Text: `x — check: ["y"]`}}}
	if err := bad.Validate(); err == nil {
		t.Errorf("Validate accepted a text that reads back as a check")
	}
}
