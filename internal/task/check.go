package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckSep separates a requirement's text from the check of its own that
// must pass for it to count as done, a JSON array of strings (an argv,
// never a shell command), as in this line of task.md:
//
//	## Requirements
//	- [FIX] the CTA links to /signup — check: ["npm", "test", "--", "cta"]
const CheckSep = " — check: "

// checkStart is CheckSep followed by the array's opening bracket: text
// containing it is always read as a requirement with a check.
const checkStart = CheckSep + "["

// splitCheck splits a requirement value at the first CheckSep followed by
// "[". It returns the text and the argv, or the whole value and nil when
// there is no check; an array that is not a non-empty JSON array of
// non-empty strings is an error.
func splitCheck(s string) (string, []string, error) {
	i, rest := checkAt(s)
	if i < 0 {
		return s, nil, nil
	}
	argv, err := parseArgv(rest)
	if err != nil {
		return s, nil, err
	}
	return s[:i], argv, nil
}

// checkAt returns where the check of a requirement value starts and the
// text of its array, or -1. A value that is only a check may start without
// the separator's leading space ("- [FIX] — check: [\"make\"]").
func checkAt(s string) (int, string) {
	if rest, ok := strings.CutPrefix(s, checkStart[1:]); ok {
		return 0, "[" + rest
	}
	i := strings.Index(s, checkStart)
	if i < 0 {
		return -1, ""
	}
	return i, s[i+len(CheckSep):]
}

// parseArgv reads a check's argv: a JSON array of strings with at least a
// program, and nothing after it.
func parseArgv(src string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(src))
	var argv []string
	if err := dec.Decode(&argv); err != nil {
		return nil, fmt.Errorf(`check must be a JSON array of strings, such as ["npm", "test"]: %v`, err)
	}
	if dec.More() || strings.TrimSpace(src[dec.InputOffset():]) != "" {
		return nil, errors.New("unexpected text after the check's argv")
	}
	if err := validArgv(argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// validArgv reports whether argv can be run and written back unchanged: a
// program and arguments, each non-empty valid UTF-8 without NUL bytes.
func validArgv(argv []string) error {
	if len(argv) == 0 {
		return errors.New("check must name a program: the argv is empty")
	}
	for i, a := range argv {
		switch {
		case i == 0 && strings.TrimSpace(a) == "":
			return errors.New("check must name a program: argv[0] is empty")
		case !utf8.ValidString(a):
			return fmt.Errorf("check argv[%d] is not valid UTF-8", i)
		case strings.IndexByte(a, 0) >= 0:
			return fmt.Errorf("check argv[%d] contains a NUL byte", i)
		}
	}
	return nil
}

// formatCheck renders argv as the JSON array task.md holds.
func formatCheck(argv []string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(argv) // a []string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
