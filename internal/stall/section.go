package stall

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Section is the plan section an agent may be stuck on, as the engine reads
// it from the plan.
type Section struct {
	// Name is the section's component name, such as "FeaturesSection".
	Name string
	// Gumdrop is the section's gumdrop, such as "features".
	Gumdrop string
	// File is the section's source file, relative to the workspace root.
	File string
	// Marker is the section's change marker for the current task, such as
	// "[ADD] 2 nighttime drink flavors", or empty.
	Marker string
}

// label returns the name a user knows the section by.
func (s Section) label() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Gumdrop != "":
		return s.Gumdrop
	}
	return s.File
}

// FindSection returns the plan section the agent was working on, judged from
// the paths in its recent tool calls, most recent call first. A call's paths
// are its string fields named path, file_path, filePath, file or target (at
// any depth) and the elements of argv, args, command or cmd that look like
// paths. A path matches a section whose File is the same path, then one whose
// File ends with it or it ends with File, then one with the same base name,
// then one whose Name is the base name without its extension. A path that
// matches several sections equally well identifies none of them.
func FindSection(calls []Call, sections []Section) (Section, bool) {
	for _, c := range slices.Backward(calls) {
		paths := inputPaths(c.Input)
		for _, match := range []func(p, file string, s Section) bool{
			func(p, file string, _ Section) bool { return p == file },
			func(p, file string, _ Section) bool {
				return strings.HasSuffix(p, "/"+file) || strings.HasSuffix(file, "/"+p)
			},
			func(p, file string, _ Section) bool { return file != "" && path.Base(p) == path.Base(file) },
			func(p, _ string, s Section) bool {
				b := path.Base(p)
				return s.Name != "" && strings.TrimSuffix(b, path.Ext(b)) == s.Name
			},
		} {
			for _, p := range paths {
				if s, ok := uniqueMatch(p, sections, match); ok {
					return s, true
				}
			}
		}
	}
	return Section{}, false
}

func uniqueMatch(p string, sections []Section, match func(p, file string, s Section) bool) (Section, bool) {
	var found []Section
	for _, s := range sections {
		file := ""
		if s.File != "" {
			file = cleanPath(s.File)
		}
		if (file != "" || s.Name != "") && match(p, file, s) {
			found = append(found, s)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return Section{}, false
}

func cleanPath(p string) string {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return strings.TrimPrefix(p, "./")
}

var (
	// pathKeys are the input fields that name a file, in order of trust.
	pathKeys = []string{"path", "file_path", "filePath", "file", "target"}
	// argvKeys are the input fields that hold a command line.
	argvKeys = []string{"argv", "args", "command", "cmd"}
	// extRE matches a file extension at the end of a word.
	extRE = regexp.MustCompile(`[^./]\.[A-Za-z][A-Za-z0-9]{0,7}$`)
)

// InputPaths returns the file paths a tool call's input names — path-like
// fields, and the path-like words of a command line — cleaned, in the order
// described at FindSection. Input that is not JSON is read as a command line.
func InputPaths(input json.RawMessage) []string { return inputPaths(input) }

func inputPaths(input json.RawMessage) []string {
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return argvPaths(strings.Fields(string(input)))
	}
	var out []string
	collectPaths(v, &out)
	return out
}

func collectPaths(v any, out *[]string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			collectPaths(e, out)
		}
	case map[string]any:
		for _, k := range pathKeys {
			if s, ok := v[k].(string); ok && s != "" {
				*out = append(*out, cleanPath(s))
			}
		}
		for _, k := range argvKeys {
			if words := stringList(v[k]); words != nil {
				*out = append(*out, argvPaths(words)...)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(pathKeys, k) && !slices.Contains(argvKeys, k) {
				collectPaths(v[k], out)
			}
		}
	}
}

// stringList returns a command line field as words: a string split at
// white space, or an array's string elements.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var words []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				words = append(words, s)
			}
		}
		return words
	}
	return nil
}

// argvPaths returns the words that look like file paths: they contain a
// slash or end in a file extension, and are not flags, URLs, globs or
// directories (a trailing slash, which also leaves out sed's s/a/b/). A
// flag's value (--out=dist/app.js) counts. Words that merely look like paths
// do no harm: FindSection only keeps those that match a section.
func argvPaths(words []string) []string {
	var out []string
	for _, w := range words {
		w = strings.Trim(w, `"'<>;,()`)
		if strings.HasPrefix(w, "-") {
			_, val, ok := strings.Cut(w, "=")
			if !ok {
				continue
			}
			w = val
		}
		if w == "" || strings.HasSuffix(w, "/") || strings.Contains(w, "://") || strings.ContainsAny(w, "*?$|&`") {
			continue
		}
		if strings.Contains(w, "/") || extRE.MatchString(w) {
			out = append(out, cleanPath(w))
		}
	}
	return out
}

// summarize returns a call as its tool name and a short summary of its
// input: the path it names, else its command line, else its canonical JSON,
// cut to one line of at most 80 characters.
func summarize(c Call) string {
	s := inputSummary(c.Input)
	if s == "" {
		return c.Name
	}
	return c.Name + " " + s
}

func inputSummary(input json.RawMessage) string {
	const max = 80
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return oneLine(string(input), max)
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range pathKeys {
			if s, ok := m[k].(string); ok && s != "" {
				return oneLine(s, max)
			}
		}
		for _, k := range argvKeys {
			if words := stringList(m[k]); len(words) > 0 {
				if s, ok := m[k].(string); ok {
					return oneLine(s, max)
				}
				return oneLine(strings.Join(words, " "), max)
			}
		}
		if len(m) == 0 {
			return ""
		}
	}
	canon, _ := canonicalJSON(input)
	return oneLine(string(canon), max)
}

// oneLine returns s's first non-blank line, trimmed and cut to max runes,
// with an ellipsis when anything was left out.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	line, rest, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	if rest != "" && len([]rune(line)) < max {
		return line + " …"
	}
	return truncate(line, max)
}
