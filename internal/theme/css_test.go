package theme

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustPreset(t *testing.T, name string) Theme {
	t.Helper()
	th, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestApplyCreatesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "src", "styles", "index.css")
	th := mustPreset(t, "cyberpunk")
	n, err := Apply(path, th)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(Tokens()); n != want {
		t.Errorf("wrote %d vars, want %d", n, want)
	}
	got, _ := os.ReadFile(path)
	if string(got) != th.CSS()+"\n" {
		t.Errorf("new file holds\n%s", got)
	}
	if missing := CheckCSS(got); len(missing) != 0 {
		t.Errorf("applied stylesheet misses %v", missing)
	}
}

func TestApplyPreservesSurroundingBytesAndIsIdempotent(t *testing.T) {
	before := "@import \"tailwindcss\";\r\n\r\n/* keep me */\n@layer base {\n  body { color: red }\n}"
	after := "\n\n.hero { background: var(--primary); }\n\t\n"
	path := filepath.Join(t.TempDir(), "index.css")
	old := before + StartMarker + "\n:root { --old: 1; }\n" + EndMarker + after
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	th := mustPreset(t, "northern-lights")
	if _, err := Apply(path, th); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	if want := before + th.CSS() + after; string(first) != want {
		t.Fatalf("surrounding CSS changed:\n%q", first)
	}
	if _, err := Apply(path, th); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	if !bytes.Equal(first, second) {
		t.Error("second apply changed the file")
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("permissions changed to %v", info.Mode().Perm())
	}
	// Replacing with another theme touches only the block.
	other := mustPreset(t, "mono")
	if _, err := Apply(path, other); err != nil {
		t.Fatal(err)
	}
	third, _ := os.ReadFile(path)
	if want := before + other.CSS() + after; string(third) != want {
		t.Error("replacing the block changed the surrounding CSS")
	}
}

func TestApplyAppendsToFileWithoutBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.css")
	os.WriteFile(path, []byte("body { margin: 0 }"), 0o644)
	th := mustPreset(t, "mono")
	if _, err := Apply(path, th); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "body { margin: 0 }\n\n" + th.CSS() + "\n"; string(got) != want {
		t.Errorf("got %q", got)
	}
	// And a second apply leaves it alone.
	Apply(path, th)
	again, _ := os.ReadFile(path)
	if !bytes.Equal(got, again) {
		t.Error("second apply changed the file")
	}
}

func TestApplyReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.css")
	os.WriteFile(path, []byte("body {}\n"), 0o444)
	_, err := Apply(path, mustPreset(t, "mono"))
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("got %v, want ErrReadOnly", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "body {}\n" {
		t.Error("read-only file was changed")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestApplyUnterminatedBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.css")
	os.WriteFile(path, []byte(StartMarker+"\n:root{}\n"), 0o644)
	if _, err := Apply(path, mustPreset(t, "mono")); err == nil || !strings.Contains(err.Error(), EndMarker) {
		t.Errorf("got %v, want an error naming the missing end marker", err)
	}
}

func TestCheckCSS(t *testing.T) {
	if got := len(CheckCSS(nil)); got != 2*len(Tokens()) {
		t.Errorf("empty stylesheet: %d missing, want %d", got, 2*len(Tokens()))
	}
	th := mustPreset(t, "bubblegum")
	css := th.CSS()
	// Drop one light token and one dark token.
	css = strings.Replace(css, "  --chart-3:", "  --chart-x:", 1)
	i := strings.Index(css, ".dark {")
	css = css[:i] + strings.Replace(css[i:], "  --sidebar-ring:", "  /* --sidebar-ring: */ --x:", 1)
	got := CheckCSS([]byte(css))
	want := []string{":root --chart-3", ".dark --sidebar-ring"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("missing %v, want %v", got, want)
	}
	// Nested in @layer, with a combined selector list.
	nested := "@layer base {\n  :root, .dark { " + declarations() + " }\n}\n"
	if got := CheckCSS([]byte(nested)); len(got) != 0 {
		t.Errorf("nested blocks: missing %v", got)
	}
	// Declarations in other rules do not count.
	other := ".card { " + declarations() + " }"
	if got := CheckCSS([]byte(other)); len(got) != 2*len(Tokens()) {
		t.Errorf("tokens outside :root/.dark counted: %d missing", len(got))
	}
}

func declarations() string {
	var b strings.Builder
	for _, tok := range Tokens() {
		b.WriteString("--" + tok + ": x; ")
	}
	return b.String()
}

func TestRecordRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ralph", "theme.json")
	if _, err := LoadRecord(path); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("missing record: got %v", err)
	}
	th, _ := Generate(GenerateOptions{Seed: 10, Pattern: "tetradic", Chroma: chroma(0), Font: "lora"})
	rec := Record{Request: th.Request, Stylesheet: "src/index.css", Vars: th.VarCount()}
	if err := SaveRecord(path, rec); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(got.Request)
	if err != nil {
		t.Fatal(err)
	}
	if again.CSS() != th.CSS() {
		t.Error("theme rebuilt from its record differs")
	}
	if got.Request.Generate.Font != "Lora" {
		t.Errorf("font not canonicalised: %q", got.Request.Generate.Font)
	}
}

func TestApplyRequest(t *testing.T) {
	dir := t.TempDir()
	got, err := ApplyRequest(dir, "", Request{Generate: GenerateOptions{Seed: 152, Pattern: "triadic"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != "ralph theme generate --seed 152 --pattern triadic --apply" {
		t.Errorf("command %q", got.Command)
	}
	if !strings.HasPrefix(got.Output, "Applied generated theme (88 vars) to src/index.css\n") {
		t.Errorf("output %q", got.Output)
	}
	rec, err := LoadRecord(filepath.Join(dir, RecordFile))
	if err != nil || rec.Stylesheet != DefaultStylesheet || rec.Request.Generate.Seed != 152 {
		t.Errorf("record %+v, %v", rec, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "index.css")); err != nil {
		t.Error(err)
	}
	if _, err := ApplyRequest(dir, "", Request{Preset: "nope"}); err == nil {
		t.Error("unknown preset applied")
	}
}

func TestApplyWritesThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.css")
	os.WriteFile(real, []byte("a {}\n"), 0o644)
	link := filepath.Join(dir, "index.css")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if _, err := Apply(link, mustPreset(t, "mono")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Lstat(link); info.Mode()&os.ModeSymlink == 0 {
		t.Error("symlink replaced by a file")
	}
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), StartMarker) {
		t.Error("target not written")
	}
}
