package recipe

import (
	"fmt"
	"strconv"
	"strings"
)

// A ParseError is a malformed recipe file: the file, the 1-based line (0
// when the problem is not on one line) and what is wrong.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// A field is one key of the front matter with either a scalar value or a
// list, and the line the key is on.
type field struct {
	key    string
	value  string
	list   []string
	isList bool
	line   int
}

// frontMatter is the parsed block between the two --- lines.
type frontMatter struct {
	fields []field
}

func (fm *frontMatter) lookup(key string) (field, bool) {
	for _, f := range fm.fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

// splitFrontMatter parses the front matter at the top of text and returns
// it with the body that follows the closing delimiter. Errors carry the
// line; the caller adds the file name.
func splitFrontMatter(text string) (*frontMatter, string, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	// A line ends at \n; any \r before it belongs to the line ending
	// (CRLF, or the CR CR LF of a CRLF file converted twice). Stripping
	// them all, not one, keeps the body free of a CRLF that a second
	// parse would collapse: parsing what Parse returns changes nothing.
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	if strings.TrimRight(lines[0], " \t") != "---" {
		return nil, "", &ParseError{Line: 1, Msg: "missing front matter: the first line must be ---"}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, "", &ParseError{Line: 1, Msg: "front matter is not closed: no line --- after the opening one"}
	}
	fm, err := parseFields(lines[1:end], 2)
	if err != nil {
		return nil, "", err
	}
	body := strings.Join(lines[end+1:], "\n")
	return fm, body, nil
}

// parseFields parses the lines of a front matter block; first is the line
// number of lines[0].
func parseFields(lines []string, first int) (*frontMatter, error) {
	fm := &frontMatter{}
	seen := map[string]int{}
	var open *field // a key with an empty value, collecting "- item" lines
	for i, raw := range lines {
		n := first + i
		trimmed := strings.TrimSpace(raw)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if trimmed == "-" || strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "-\t") {
			if open == nil {
				return nil, &ParseError{Line: n, Msg: "list item outside a list: put it under a key with no value (key:)"}
			}
			item, err := unquote(strings.TrimSpace(trimmed[1:]))
			if err != nil {
				return nil, &ParseError{Line: n, Msg: err.Error()}
			}
			if item == "" {
				return nil, &ParseError{Line: n, Msg: "empty list item"}
			}
			open.list = append(open.list, item)
			open.isList = true
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("unexpected indented line %q: only list items (- item) may be indented", trimmed)}
		}
		key, value, ok := strings.Cut(raw, ":")
		if !ok {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("want key: value, have %q", trimmed)}
		}
		key = strings.TrimSpace(key)
		if !validKey(key) {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("bad key %q: use letters, digits, - and _", key)}
		}
		if prev, dup := seen[key]; dup {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("duplicate key %q (first on line %d)", key, prev)}
		}
		seen[key] = n
		f := field{key: key, line: n}
		value = strings.TrimSpace(value)
		switch {
		case value == "":
			// A block list may follow.
		case strings.HasPrefix(value, "["):
			items, err := parseInlineList(value)
			if err != nil {
				return nil, &ParseError{Line: n, Msg: err.Error()}
			}
			f.list, f.isList = items, true
		default:
			v, err := unquote(value)
			if err != nil {
				return nil, &ParseError{Line: n, Msg: err.Error()}
			}
			f.value = v
		}
		fm.fields = append(fm.fields, f)
		open = nil
		if value == "" {
			open = &fm.fields[len(fm.fields)-1]
		}
	}
	return fm, nil
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// parseInlineList parses [a, "b, c", 'd'] into its items.
func parseInlineList(s string) ([]string, error) {
	if !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("inline list %q is not closed with ]", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return []string{}, nil
	}
	var items []string
	for len(inner) > 0 {
		var item string
		if inner[0] == '"' || inner[0] == '\'' {
			end := closingQuote(inner)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in list %q", s)
			}
			v, err := unquote(inner[:end+1])
			if err != nil {
				return nil, err
			}
			item = v
			inner = strings.TrimSpace(inner[end+1:])
			if inner != "" && inner[0] != ',' {
				return nil, fmt.Errorf("want , after %q in list %q", item, s)
			}
		} else {
			raw, _, _ := strings.Cut(inner, ",")
			item = strings.TrimSpace(raw)
			if strings.ContainsAny(item, "[]\"'") {
				return nil, fmt.Errorf("bad list item %q: quote items that hold brackets or quotes", item)
			}
			inner = inner[len(raw):]
		}
		if item == "" {
			return nil, fmt.Errorf("empty item in list %q", s)
		}
		items = append(items, item)
		if strings.HasPrefix(inner, ",") {
			inner = strings.TrimSpace(inner[1:])
			if inner == "" {
				return nil, fmt.Errorf("trailing comma in list %q", s)
			}
		}
	}
	return items, nil
}

// closingQuote returns the index of the quote that closes the quoted
// string at the start of s, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++ // '' is an escaped quote inside single quotes
		case s[i] == q:
			return i
		}
	}
	return -1
}

// unquote strips one level of "double" (Go escapes) or 'single' quotes (two
// single quotes inside stand for one); a bare value is returned as it is.
func unquote(v string) (string, error) {
	if v == "" {
		return v, nil
	}
	switch v[0] {
	case '"':
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("bad double-quoted value %s", v)
		}
		return s, nil
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' || closingQuote(v) != len(v)-1 {
			return "", fmt.Errorf("bad single-quoted value %s", v)
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	return v, nil
}
