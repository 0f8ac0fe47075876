package secrets

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestScrubberShapes(t *testing.T) {
	sc := New([]string{"a-value-from-the-env"})
	for _, tc := range []struct{ in, want string }{
		{"key a-value-from-the-env here", "key [redacted] here"},
		{"short sk-ant-api03-Ab", "short [redacted]"},
		{"cut ghp_abcdefghijklmnopqrstuv", "cut [redacted]"},
		{"aws AKIAABCDEFGHIJKLMNOP.", "aws [redacted]."},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", "[redacted]"},
		{"a task-ant-list and sk-learn", "a task-ant-list and sk-learn"},
		{"the task-management-system-design", "the task-management-system-design"},
		{"key=sk-proj-abcdefghijklmnopqrst", "key=[redacted]"},
	} {
		if got := sc.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var b bytes.Buffer
	_, _ = Writer(&b, sc).Write([]byte("printed a-value-from-the-env\n"))
	if b.String() != "printed [redacted]\n" {
		t.Errorf("Writer wrote %q", b.String())
	}
}

func TestIsFile(t *testing.T) {
	for path, want := range map[string]bool{
		".env": true, "app/.env.local": true, "certs/server.pem": true, "home/.ssh/id_ed25519": true,
		".npmrc": true, "aws/credentials": true, "main.go": false, "id_test.go": false, "environment.md": false,
	} {
		if got := IsFile(path); got != want {
			t.Errorf("IsFile(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestValuesNamedByConfig(t *testing.T) {
	root := t.TempDir()
	toml := "[notify.telegram]\ntoken_env = \"MY_BOT\"\nchat_id = 1\n[notify.webhook]\nsecret_env = \"HOOK\"\n[agents.api]\napi_key_env = \"LLM\"\n"
	if err := os.WriteFile(filepath.Join(root, "ralph.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Values([]string{"MY_BOT=123456:bot-token-value", "HOOK=hook-signing-secret", "LLM=llm-key-value", "PLAIN=not-a-secret-value"}, root)
	want := []string{"123456:bot-token-value", "hook-signing-secret", "llm-key-value"}
	if !slices.Equal(got, want) {
		t.Errorf("Values = %q, want %q", got, want)
	}
}

// Every key shape holds one of shapeMarks, so that text without them can
// skip the expression: one example of each shape, and any text the
// fuzzer finds the expression matches.
func FuzzShapeMarks(f *testing.F) {
	for _, s := range []string{
		"sk-ant-api03-Abcdef", "sk-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnopqrst", "sk-svcacct-abcdefghijklmnopqr",
		"ghp_abcdefghijklmn", "gho_abcdefghijklmn", "ghu_abcdefghijklmn", "ghs_abcdefghijklmn", "ghr_abcdefghijklmn",
		"github_pat_abcdefghijkl", "AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "xoxb-1234567890",
		"AIzaabcdefghijklmnopqrstu", "glpat-abcdefghijkl", "-----BEGIN RSA PRIVATE KEY-----", "nothing here",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !secretShapes.MatchString(s) {
			return
		}
		if got := scrubShapes(s); got != secretShapes.ReplaceAllString(s, Redacted) {
			t.Errorf("scrubShapes(%q) = %q, missed a key shape", s, got)
		}
		if got := string(New(nil).Bytes([]byte(s))); got != secretShapes.ReplaceAllString(s, Redacted) {
			t.Errorf("Bytes(%q) = %q, missed a key shape", s, got)
		}
	})
}
