package task

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vibrant is the VIBRANT ENERGY task of seed 002 §5.
func vibrant() Task {
	return Task{
		Title:    "Refine VIBRANT ENERGY landing page",
		Type:     Mutation,
		Previous: "task-2-post",
		Counter:  3,
		Requirements: []Requirement{
			{Kind: Modify, Text: "Refine ad copy in hero and CTA sections: less generic, more adult, less Monster Energy"},
			{Kind: Fix, Text: "Theme toggle: two moods (voltage/chrome) not switching correctly"},
			{Kind: Add, Text: "2 new nighttime/rest drink flavors (add to existing 8, total → 10)"},
			{Kind: Modify, Text: "Second theme mood: adjust to nighttime aesthetic for new drinks"},
		},
		Preserve: []string{
			"All 8 existing energy drink flavors unchanged",
			"Store page structure and content",
			"Navigation and routing",
		},
		AffectedFiles: []string{"HeroSection.tsx", "CTASection.tsx", "FlavorGrid.tsx", "index.css", "ThemeToggle.tsx"},
		Original:      "refine ad copy! less generic, more adult, less monster energy.\ntwo moods not working. add 2 more drinks for nighttime.",
	}
}

func TestFormatSeedLayout(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "vibrant.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := Format(vibrant())
	if string(got) != string(want) {
		t.Errorf("Format(vibrant) =\n%s\nwant (testdata/vibrant.md)\n%s", got, want)
	}
	back, err := Parse(want)
	if err != nil {
		t.Fatalf("Parse(testdata/vibrant.md): %v", err)
	}
	if !cmp.Equal(back, vibrant()) {
		t.Errorf("Parse(testdata/vibrant.md) = %#v\nwant %#v", back, vibrant())
	}
}

func TestTemplateIsValidTaskMD(t *testing.T) {
	msg := "refine ad copy! less generic, more adult, less monster energy.\ntwo moods not working. add 2 more drinks for nighttime."
	tmpl := Template(msg, 3, "task-2-post")
	tmpl.Likely = Mutation
	src := Format(tmpl)
	for _, want := range []string{
		"# Task: refine ad copy! less generic, more adult, less monster…\n",
		"Type: pending (likely mutation)\n",
		"Previous: task-2-post\n",
		"Counter: 3\n",
		"## Requirements (fill these in during planning)\n- [ ] ...\n",
		"## Scope (declare what is preserved)\n- PRESERVE: ...\n- AFFECTED FILES: ...\n",
		"## Original Message\n> refine ad copy! less generic, more adult, less monster energy.\n> two moods not working. add 2 more drinks for nighttime.\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("template task.md lacks %q:\n%s", want, src)
		}
	}
	back, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(template): %v\n%s", err, src)
	}
	if !cmp.Equal(back, tmpl) {
		t.Errorf("Parse(Format(template)) = %#v\nwant %#v", back, tmpl)
	}
	if back.Route() != Mutation {
		t.Errorf("Route() = %q, want the likely type %q", back.Route(), Mutation)
	}
	if Template("x", 1, "").Previous != "none" {
		t.Errorf("Template with no previous snapshot: Previous = %q, want none", Template("x", 1, "").Previous)
	}
}

// The seed's own Option B layout, as an agent or a person might write it.
func TestParseSeedTemplate(t *testing.T) {
	src := "# Task\r\nType: pending\r\nPrevious: task-2-post\r\n\r\n## Raw Message\r\n> refine ad copy!\r\n> add 2 more drinks.\r\n\r\n" +
		"## Requirements (Ralph: fill these in during planning)\r\n- [ ] ...\r\n- [add] 2 drinks\r\n\r\n" +
		"## Scope (Ralph: declare what's preserved)\r\n- PRESERVE: ...\r\n- AFFECTED FILES: src\\App.tsx,b.tsx, c\\,d.tsx\r\n"
	got, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Task{
		Type:          Pending,
		Previous:      "task-2-post",
		Requirements:  []Requirement{{Kind: Open, Text: "..."}, {Kind: Add, Text: "2 drinks"}},
		Preserve:      []string{"..."},
		AffectedFiles: []string{`src\App.tsx`, "b.tsx", "c,d.tsx"},
		Original:      "refine ad copy!\nadd 2 more drinks.",
	}
	if !cmp.Equal(got, want) {
		t.Errorf("Parse(seed template) = %#v\nwant %#v", got, want)
	}
}

func TestRoundTripExamples(t *testing.T) {
	for name, tk := range map[string]Task{
		"zero":        {Type: Fresh},
		"vibrant":     vibrant(),
		"markdown":    {Type: Bugfix, Original: "# Task: not a heading\n## Scope\n> quoted\n- [ADD] not a requirement\n>\n"},
		"blank lines": {Type: Fresh, Original: "\n\nfirst\n\n\nlast\n\n"},
		"spaces":      {Title: " padded ", Type: Fresh, Previous: " ", Original: "  indented\ntrailing   \n \t"},
		"crlf":        {Type: Mutation, Original: "windows\r\nline\r\n", Question: "a\r\nb\r"},
		"unicode":     {Title: "Café ☕ 🙂", Type: Fresh, Original: "日本語のメッセージ\n🙂 \u2028 \u00a0"},
		"escapes":     {Title: `a\nb` + "\nc\\", Type: Fresh, Requirements: []Requirement{{Kind: Fix, Text: "line1\nline2\\"}}, Original: `\n`},
		"files": {Type: Mutation, AffectedFiles: []string{"", "a, b", " lead", "trail ", `back\`, ",", `\,`},
			Preserve: []string{"", "x"}},
		"empty texts": {Type: NeedsClarification, Requirements: []Requirement{{Kind: Open, Text: ""}, {Kind: Add, Text: ""}},
			Question: "Add new ones, or convert some?", Likely: Fresh},
		"negative counter": {Type: Pending, Counter: -7, Likely: Pending},
		"only newline":     {Type: Fresh, Original: "\n"},
		"invalid utf8":     {Title: "\xff\xfe", Type: Fresh, Original: "\xc3\x28\n\xff"},
	} {
		t.Run(name, func(t *testing.T) { checkRoundTrip(t, tk) })
	}
}

func checkRoundTrip(t *testing.T, tk Task) {
	t.Helper()
	src := Format(tk)
	got, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(Format(t)): %v\n--- task.md ---\n%s", err, src)
	}
	if !cmp.Equal(got, tk) {
		t.Fatalf("Parse(Format(t)) = %#v\nwant %#v\n--- task.md ---\n%s", got, tk, src)
	}
}

// TestRoundTripProperty checks Parse(Format(t)) == t over random tasks
// whose strings are made of the characters the format has to be careful
// with.
func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		checkRoundTrip(t, randomTask(r))
	}
}

// nasty returns the pieces random strings are built from.
func nasty() []string {
	return []string{
		"a", "Z", " ", "  ", "\t", "\n", "\r", "\r\n", "\n\n", "#", "# Task: ", "## Scope",
		"## Original Message", ">", "> ", "- ", "- [ADD] ", "[ ]", "]", "[", ":", ",", ", ",
		`\`, `\n`, `\,`, `\\`, "(likely fresh)", " (", ")", "é", "☕", "🙂", "日本", "\u00a0",
		"\uFEFF", "\x00", "\xff", "PRESERVE:", "Type: ", "Counter: 9",
	}
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	pieces := nasty()
	for range r.IntN(8) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randomStrings(r *rand.Rand) []string {
	n := r.IntN(4)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = randomString(r)
	}
	return out
}

func randomTask(r *rand.Rand) Task {
	types, kinds := Types(), Kinds()
	tk := Task{
		Title:         randomString(r),
		Type:          types[r.IntN(len(types))],
		Previous:      randomString(r),
		Counter:       r.IntN(2000) - 1000,
		Preserve:      randomStrings(r),
		AffectedFiles: randomStrings(r),
		Question:      randomString(r),
		Original:      randomString(r),
	}
	if r.IntN(2) == 0 {
		tk.Likely = types[r.IntN(len(types))]
	}
	for range r.IntN(5) {
		tk.Requirements = append(tk.Requirements, Requirement{Kind: kinds[r.IntN(len(kinds))], Text: randomString(r)})
	}
	return tk
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"empty", "", 1, `missing "# Task" heading`},
		{"no title", "Type: fresh\n", 1, `expected "# Task" heading`},
		{"wrong title", "\n# Tasks\n", 2, `expected "# Task" heading`},
		{"no type", "# Task: x\nCounter: 1\n", 1, `missing "Type:" header`},
		{"bad type", "# Task: x\nType: banana\n", 2, `unknown task type "banana"`},
		{"bad likely", "# Task: x\nType: pending (maybe fresh)\n", 2, "expected"},
		{"bad likely type", "# Task: x\nType: pending (likely banana)\n", 2, `unknown likely task type "banana"`},
		{"bad counter", "# Task: x\nType: fresh\nCounter: three\n", 3, `counter "three" is not an integer`},
		{"dup header", "# Task: x\nType: fresh\nType: bugfix\n", 3, `duplicate "Type" (first on line 2)`},
		{"unknown header", "# Task: x\nType: fresh\nStatus: done\n", 3, `unknown header "Status"`},
		{"stray line", "# Task: x\nType: fresh\nhello\n", 3, "expected a \"Type:\""},
		{"unknown section", "# Task: x\nType: fresh\n\n## Notes\n", 4, `unknown section "Notes"`},
		{"h1 in body", "# Task: x\nType: fresh\n# Again\n", 3, "unexpected heading"},
		{"h3", "# Task: x\nType: fresh\n### Deep\n", 3, "unexpected heading"},
		{"dup section", "# Task: x\nType: fresh\n## Scope\n## Scope\n", 4, `duplicate "## Scope"`},
		{"raw and original", "# Task: x\nType: fresh\n## Raw Message\n## Original Message\n", 4, "duplicate"},
		{"bad requirement", "# Task: x\nType: fresh\n## Requirements\n* add it\n", 4, "expected a requirement"},
		{"bad marker", "# Task: x\nType: fresh\n## Requirements\n- [CHANGE] it\n", 4, "unknown requirement marker [CHANGE]"},
		{"no space", "# Task: x\nType: fresh\n## Requirements\n- [ADD]it\n", 4, "expected a space after [ADD]"},
		{"bad scope", "# Task: x\nType: fresh\n## Scope\n- KEEP: it\n", 4, "expected \"- PRESERVE:"},
		{"unquoted", "# Task: x\nType: fresh\n## Original Message\n> a\nb\n", 5, `expected a quoted line starting with ">"`},
		{"gap in quote", "# Task: x\nType: fresh\n## Original Message\n> a\n\n> b\n", 6, "blank line inside quoted text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("Parse error = %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Parse error = %q, want line %d containing %q", err, tc.line, tc.msg)
			}
		})
	}
}

func TestParseTolerates(t *testing.T) {
	src := "\uFEFF\n\n# Task:Title\n\nCounter:4\nType:   bugfix  \nPrevious:none\n\n\n" +
		"## original message\n\n> hi\n>there\n\n\n## Requirements\n\n- [fix] it\n- []\n"
	got, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Task{Title: "Title", Type: Bugfix, Previous: "none", Counter: 4,
		Requirements: []Requirement{{Kind: Fix, Text: "it"}, {Kind: Open, Text: ""}}, Original: "hi\nthere"}
	if !cmp.Equal(got, want) {
		t.Errorf("Parse = %#v\nwant %#v", got, want)
	}
}

func TestValidate(t *testing.T) {
	if err := vibrant().Validate(); err != nil {
		t.Errorf("Validate(vibrant) = %v", err)
	}
	for _, tk := range []Task{
		{},
		{Type: "banana"},
		{Type: Fresh, Likely: "maybe"},
		{Type: Fresh, Requirements: []Requirement{{Kind: "ADDS"}}},
	} {
		if err := tk.Validate(); err == nil {
			t.Errorf("Validate(%#v) = nil, want an error", tk)
		}
		if _, err := Parse(Format(tk)); err == nil {
			t.Errorf("Parse(Format(%#v)) accepted an invalid task", tk)
		}
	}
}
