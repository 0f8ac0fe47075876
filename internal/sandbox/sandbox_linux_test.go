package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// keptFile is the ruleset kept for p, nil when none is.
func keptFile(p Policy) *os.File {
	made.Lock()
	defer made.Unlock()
	for _, k := range made.kept {
		if k.key == p.key() {
			return k.f
		}
	}
	return nil
}

// A policy's second ruleset is the first one, kept; a path of the policy
// made again makes a new one; and no more than made.max are kept.
func TestRulesetKeptWhilePathsStay(t *testing.T) {
	if !Probe().Available() {
		t.Skip("no Landlock here")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := Policy{Read: []string{"/usr", "/etc/hostname", "/nonexistent"}, Write: []string{ws}}
	call := func(p Policy) {
		t.Helper()
		f, err := p.Ruleset()
		if err != nil {
			t.Fatal(err)
		}
		f.Close() // the caller's copy: the kept one stays open
	}
	call(p)
	first := keptFile(p)
	if first == nil {
		t.Fatal("no ruleset kept")
	}
	call(p)
	if keptFile(p) != first {
		t.Error("the second call made a new ruleset for the same paths")
	}
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	call(p)
	if k := keptFile(p); k == nil || k == first {
		t.Error("a workspace made again kept the ruleset of the one removed")
	}
	for i := range made.max + 2 {
		call(Policy{Read: []string{"/usr", filepath.Join(t.TempDir(), strconv.Itoa(i))}, Write: []string{ws}})
	}
	made.Lock()
	n := len(made.kept)
	made.Unlock()
	if n > made.max {
		t.Errorf("%d rulesets kept, want at most %d", n, made.max)
	}
	if keptFile(p) != nil {
		t.Error("the oldest ruleset was not let go")
	}
}
