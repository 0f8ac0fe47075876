package task

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds arbitrary bytes to Parse. It must never panic, and any
// task it accepts must survive Format and Parse unchanged, with Format
// stable from then on.
func FuzzParse(f *testing.F) {
	f.Add(Format(vibrant()))
	f.Add(Format(Template("make it better\n\n> quoted\r\n# heading", 7, "task-6-post")))
	f.Add([]byte("# Task\r\nType: pending (likely fresh)\r\n## Raw Message\r\n> a\r\n>\r\n"))
	f.Add([]byte("# Task: cta\nType: bugfix\n## Requirements\n- [FIX] the CTA links to /signup — check: [\"npm\", \"test\", \"--\", \"cta\"]\n- [FIX] — check: [\"a\\\\b\", \"x — check: [\\\"y\\\"]\"]\n"))
	f.Add([]byte("# Task\nType: bugfix\n## Requirements\n- [FIX] x — check: [\"\"]\n- [FIX] y — check: [1]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		tk, err := Parse(src)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse error %T %v, want *SyntaxError", err, err)
			}
			return
		}
		if err := tk.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid task: %v", err)
		}
		out := Format(tk)
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Format(Parse(src))): %v\n--- src ---\n%q\n--- formatted ---\n%q", err, src, out)
		}
		if !cmp.Equal(back, tk) {
			t.Fatalf("round trip changed the task:\n got %#v\nwant %#v\n--- formatted ---\n%q", back, tk, out)
		}
		if again := Format(back); !bytes.Equal(again, out) {
			t.Fatalf("Format not stable:\n%q\n%q", out, again)
		}
	})
}

// FuzzFormat builds tasks from arbitrary strings: Parse(Format(t)) == t.
func FuzzFormat(f *testing.F) {
	v := vibrant()
	f.Add(v.Title, v.Previous, v.Requirements[0].Text, "", v.Preserve[0], v.AffectedFiles[0], "", v.Original, uint8(1), uint8(1), 3)
	f.Add("# Task: x", "\r", "line\nbreak\\", "", "", "a, b\\,c", "why?\r\n", "> q\n\n#\r\n ", uint8(4), uint8(4), -1)
	f.Add("cta", "none", "the CTA links to /signup —", "npm\x00test\x00--\x00c\"ta — check: [\"x\"]", "", "", "", "m", uint8(2), uint8(2), 1)
	f.Fuzz(func(t *testing.T, title, previous, text, check, preserve, file, question, original string, typ, kind uint8, counter int) {
		types, kinds := Types(), Kinds()
		tk := Task{
			Title:         title,
			Type:          types[int(typ)%len(types)],
			Likely:        types[int(typ/8)%len(types)],
			Previous:      previous,
			Counter:       counter,
			Requirements:  []Requirement{{Kind: kinds[int(kind)%len(kinds)], Text: text}, {Kind: Fix, Text: text, Check: argv(check)}},
			Preserve:      []string{preserve, text},
			AffectedFiles: []string{file, preserve, file},
			Question:      question,
			Original:      original,
		}
		if err := tk.Validate(); err != nil {
			t.Skip(err) // text that reads as a check, or an argv that cannot run
		}
		src := Format(tk)
		got, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(Format(t)): %v\n%q", err, src)
		}
		if !cmp.Equal(got, tk) {
			t.Fatalf("Parse(Format(t)) = %#v\nwant %#v\n%q", got, tk, src)
		}
	})
}

// argv splits a fuzzed string at NUL bytes into a check's argv; "" is no
// check.
func argv(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
