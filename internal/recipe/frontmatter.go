package recipe

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
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

// parseFields parses the lines of a front matter block, a YAML mapping;
// first is the line number of lines[0].
func parseFields(lines []string, first int) (*frontMatter, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &doc); err != nil {
		return nil, yamlError(lines, first, err)
	}
	fm := &frontMatter{}
	if doc.Kind == 0 {
		return fm, nil // only blank lines and comments
	}
	root := doc.Content[0]
	at := func(n *yaml.Node) int { return first + n.Line - 1 }
	if root.Kind != yaml.MappingNode {
		return nil, &ParseError{Line: at(root), Msg: "want key: value lines"}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		n := at(k)
		if k.Kind != yaml.ScalarNode || !validKey(k.Value) {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("bad key %q: use letters, digits, - and _", keyText(lines, first, k))}
		}
		if prev, dup := seen[k.Value]; dup {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("duplicate key %q (first on line %d)", k.Value, prev)}
		}
		seen[k.Value] = n
		f := field{key: k.Value, line: n}
		switch v = deref(v); v.Kind {
		case yaml.ScalarNode:
			f.value = scalar(v)
		case yaml.SequenceNode:
			f.list, f.isList = []string{}, true
			for _, item := range v.Content {
				item = deref(item)
				if item.Kind != yaml.ScalarNode {
					return nil, &ParseError{Line: at(item), Msg: fmt.Sprintf("list item of %s is not a single value", k.Value)}
				}
				s := scalar(item)
				if s == "" {
					return nil, &ParseError{Line: at(item), Msg: "empty list item"}
				}
				f.list = append(f.list, s)
			}
		default:
			f.value = "" // a nested mapping: no key ralph reads takes one
			f.isList = true
		}
		fm.fields = append(fm.fields, f)
	}
	return fm, nil
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// scalar is a scalar node's text; a null (an empty value, ~ or null) is "".
func scalar(n *yaml.Node) string {
	if n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// keyText is the key as written on its line, for an error message.
func keyText(lines []string, first int, k *yaml.Node) string {
	if k.Kind == yaml.ScalarNode {
		return k.Value
	}
	if i := k.Line - 1; i >= 0 && i < len(lines) {
		key, _, _ := strings.Cut(lines[i], ":")
		return strings.TrimSpace(key)
	}
	return ""
}

// yamlError turns a YAML syntax error into a ParseError on the line where
// the block stops being YAML. The YAML parser names the line where the
// construct it was reading began, or no line at all, so the line is found
// as the first one that the longest well-formed prefix of the block cannot
// take.
func yamlError(lines []string, first int, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if _, m, ok := strings.Cut(rest, ": "); ok {
			msg = m
		}
	}
	ok := 0 // lines[:ok] parses
	for k := 1; k < len(lines); k++ {
		var n yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(lines[:k], "\n")), &n) == nil {
			ok = k
		}
	}
	if ok < len(lines) {
		msg = fmt.Sprintf("%s in %q", msg, strings.TrimSpace(lines[ok]))
	}
	return &ParseError{Line: first + ok, Msg: msg}
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
