package spec

import (
	"os/exec"
	"strings"
	"testing"
)

// A spec's branch is a name git takes whatever the file is called, the
// same for the same spec, and different for different specs.
func TestSpecBranch(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"001-login", "ralph/spec/001-login"},
		{"auth/002-logout", "ralph/spec/auth/002-logout"},
		{"add dark mode", "ralph/spec/add-dark-mode-"},
		{"café menu", "ralph/spec/caf--menu-"},
		{"-x..y.lock", "ralph/spec/x-y.lock-spec-"},
	} {
		got := Spec{ID: tc.id}.Branch()
		if !strings.HasPrefix(got, tc.want) || (got != tc.want && len(got) != len(tc.want)+6) {
			t.Errorf("Branch(%q) = %q, want %q…", tc.id, got, tc.want)
		}
		if out, err := exec.Command("git", "check-ref-format", "refs/heads/"+got).CombinedOutput(); err != nil {
			t.Errorf("git refuses %q: %s", got, out)
		}
	}
	if (Spec{ID: "a b"}).Branch() == (Spec{ID: "a-b"}).Branch() || (Spec{ID: "a b"}).Branch() == (Spec{ID: "a_b c"}).Branch() {
		t.Error("two specs share a branch")
	}
}
