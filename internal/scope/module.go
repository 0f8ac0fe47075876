package scope

import (
	"path"
	"strings"
)

// module is one tokenized source file: the section file itself or a file it
// imports data from.
type module struct {
	toks []token
	// match holds, for each bracket token, the index of its partner; an
	// opener left unclosed matches len(toks), a stray closer -1.
	match []int
	// spec is the import specifier this module was read under ("" for the
	// section file); nested relative imports are resolved against it.
	spec string
	json bool
}

func newModule(src []byte, spec string) *module {
	m := &module{toks: tokenize(src), spec: spec, json: strings.HasSuffix(spec, ".json")}
	m.match = matchBrackets(m.toks)
	return m
}

func matchBrackets(toks []token) []int {
	match := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		match[i] = -1
		if t.kind != tkPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			if n := len(stack); n > 0 && closerOf(toks[stack[n-1]].text) == t.text {
				match[stack[n-1]] = i
				match[i] = stack[n-1]
				stack = stack[:n-1]
			}
		}
	}
	for _, i := range stack {
		match[i] = len(toks)
	}
	return match
}

func closerOf(open string) string {
	switch open {
	case "(":
		return ")"
	case "[":
		return "]"
	}
	return "}"
}

func isOpener(t token) bool {
	return t.kind == tkPunct && (t.text == "(" || t.text == "[" || t.text == "{")
}

func isCloser(t token) bool {
	return t.kind == tkPunct && (t.text == ")" || t.text == "]" || t.text == "}")
}

// tok returns the token at i, or a zero token out of range.
func (m *module) tok(i int) token {
	if i < 0 || i >= len(m.toks) {
		return token{kind: tkPunct, pos: -1}
	}
	return m.toks[i]
}

// closeOf returns the index of the closer matching the opener at i, at most
// len(toks).
func (m *module) closeOf(i int) int {
	if i < 0 || i >= len(m.toks) {
		return len(m.toks)
	}
	if c := m.match[i]; c > i {
		return c
	}
	return len(m.toks)
}

// split returns the token ranges of the comma-separated parts between the
// opener at open and its closer, skipping empty parts (holes, a trailing
// comma).
func (m *module) split(open int) [][2]int {
	end := m.closeOf(open)
	var parts [][2]int
	a := open + 1
	for j := open + 1; j < end; {
		t := m.toks[j]
		if isOpener(t) {
			j = m.closeOf(j) + 1
			continue
		}
		if t.punct(",") {
			if j > a {
				parts = append(parts, [2]int{a, j})
			}
			a = j + 1
		}
		j++
	}
	if end > a {
		parts = append(parts, [2]int{a, min(end, len(m.toks))})
	}
	return parts
}

// skipType skips a type annotation starting after ':' at i and returns the
// index of the '=' that ends it, or -1.
func (m *module) skipType(i int) int {
	for j := i; j < len(m.toks); {
		t := m.toks[j]
		switch {
		case isOpener(t):
			j = m.closeOf(j) + 1
			continue
		case t.punct("="):
			return j
		case t.punct(";") || t.punct(",") || isCloser(t):
			return -1
		}
		j++
	}
	return -1
}

// declValue finds `const|let|var name [: Type] = …`, or the first name of
// an array pattern (`const [name, setName] = useState(…)`), and returns the
// index of the first token of the initializer, or -1.
func (m *module) declValue(name string) int {
	for i := 0; i+2 < len(m.toks); i++ {
		t := m.toks[i]
		if t.kind != tkIdent || (t.text != "const" && t.text != "let" && t.text != "var") {
			continue
		}
		j := i + 2
		switch {
		case m.toks[i+1].is(tkIdent, name):
		case m.toks[i+1].punct("[") && m.toks[i+2].is(tkIdent, name):
			// const [items, setItems] = useState([…])
			j = m.closeOf(i+1) + 1
		default:
			continue
		}
		if m.tok(j).punct(":") {
			j = m.skipType(j + 1)
			if j < 0 {
				continue
			}
		}
		if m.tok(j).punct("=") && j+1 < len(m.toks) {
			return j + 1
		}
	}
	return -1
}

// importBinding describes how a local name was imported.
type importBinding struct {
	spec   string // the module specifier as written
	export string // the exported name; "default" or "*" for a namespace
}

// importOf finds the import that binds local, if any.
func (m *module) importOf(local string) (importBinding, bool) {
	for i := 0; i < len(m.toks); i++ {
		if !m.toks[i].is(tkIdent, "import") {
			continue
		}
		j := i + 1
		if m.tok(j).is(tkIdent, "type") {
			j++
		}
		var found importBinding
		ok := false
		for j < len(m.toks) && !m.toks[j].is(tkIdent, "from") {
			t := m.toks[j]
			switch {
			case t.kind == tkIdent:
				if t.text == local {
					found, ok = importBinding{export: "default"}, true
				}
			case t.punct("*") && m.tok(j+1).is(tkIdent, "as"):
				if m.tok(j+2).is(tkIdent, local) {
					found, ok = importBinding{export: "*"}, true
				}
				j += 2
			case t.punct("{"):
				end := m.closeOf(j)
				for _, p := range m.split(j) {
					ex, loc := m.toks[p[0]].text, m.toks[p[0]].text
					k := p[0]
					if m.toks[k].is(tkIdent, "type") && p[1]-p[0] > 1 {
						k++
						ex, loc = m.toks[k].text, m.toks[k].text
					}
					if k+2 < p[1] && m.toks[k+1].is(tkIdent, "as") {
						loc = m.toks[k+2].text
					}
					if loc == local {
						found, ok = importBinding{export: ex}, true
					}
				}
				j = end
			case t.punct(";") || t.punct("(") || t.kind == tkString:
				j = len(m.toks) // a side-effect import or a broken one
			}
			j++
		}
		if ok && m.tok(j+1).kind == tkString {
			found.spec = unquote(m.toks[j+1].text)
			return found, true
		}
	}
	return importBinding{}, false
}

// reexportsOf finds `export { name } from 'x'`, `export { a as name } from
// 'x'` or `export * from 'x'` and returns the specifier and the name to look
// up there. Star re-exports are returned with the same name.
func (m *module) reexportsOf(name string) []importBinding {
	var out []importBinding
	for i := 0; i+1 < len(m.toks); i++ {
		if !m.toks[i].is(tkIdent, "export") {
			continue
		}
		j := i + 1
		switch {
		case m.toks[j].punct("*") && m.tok(j+1).is(tkIdent, "from") && m.tok(j+2).kind == tkString:
			out = append(out, importBinding{spec: unquote(m.toks[j+2].text), export: name})
		case m.toks[j].punct("{"):
			end := m.closeOf(j)
			if !m.tok(end+1).is(tkIdent, "from") || m.tok(end+2).kind != tkString {
				continue
			}
			for _, p := range m.split(j) {
				ex, as := m.toks[p[0]].text, m.toks[p[0]].text
				if p[0]+2 < p[1] && m.toks[p[0]+1].is(tkIdent, "as") {
					as = m.toks[p[0]+2].text
				}
				if as == name {
					out = append(out, importBinding{spec: unquote(m.tok(end + 2).text), export: ex})
				}
			}
		}
	}
	return out
}

// defaultExport returns the index of the value after `export default`, or -1.
func (m *module) defaultExport() int {
	for i := 0; i+2 < len(m.toks); i++ {
		if m.toks[i].is(tkIdent, "export") && m.toks[i+1].is(tkIdent, "default") {
			return i + 2
		}
	}
	return -1
}

// joinSpec resolves a nested relative specifier written in a module that
// was itself read under spec base.
func joinSpec(base, spec string) string {
	if base == "" || !isRelative(spec) {
		return spec
	}
	j := path.Join(path.Dir(base), spec)
	if isRelative(base) && !strings.HasPrefix(j, "../") && j != ".." {
		j = "./" + j
	}
	return j
}

func isRelative(spec string) bool {
	return strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

// sourceExts are the extensions tried, in order, for an import specifier
// written without one.
var sourceExts = [...]string{".ts", ".tsx", ".js", ".jsx", ".json"}

// candidates lists the file specifiers an import may name.
func candidates(spec string) []string {
	ext := path.Ext(spec)
	switch ext {
	case ".ts", ".tsx", ".jsx", ".json", ".mjs", ".cjs":
		return []string{spec}
	case ".js":
		// TypeScript ESM style: './data.js' names './data.ts'.
		base := strings.TrimSuffix(spec, ext)
		return []string{spec, base + ".ts", base + ".tsx"}
	}
	out := make([]string, 0, 2*len(sourceExts))
	for _, e := range sourceExts {
		out = append(out, spec+e)
	}
	for _, e := range sourceExts[:4] {
		out = append(out, spec+"/index"+e)
	}
	return out
}

// unquote returns the contents of a string or template literal token,
// decoding the common escapes.
func unquote(lit string) string {
	if len(lit) < 2 {
		return ""
	}
	q := lit[0]
	body := lit[1:]
	if body[len(body)-1] == q {
		body = body[:len(body)-1]
	}
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(body[i])
		}
	}
	return b.String()
}
