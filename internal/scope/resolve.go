package scope

import "strconv"

// Resolution limits: how deep aliases, imports and spreads are followed,
// how many files are read, and how many lookups one count may make.
const (
	maxDepth   = 12
	maxModules = 16
	maxSteps   = 400
)

// resolver follows identifiers to the literal values they name, across
// the section file and the files it imports.
type resolver struct {
	siblings func(string) ([]byte, bool)
	mods     map[string]*module
	steps    int
}

func newResolver(siblings func(string) ([]byte, bool)) *resolver {
	return &resolver{siblings: siblings, mods: map[string]*module{}}
}

// value is a literal found by resolution: the token at i in m opens it
// ('[' or '{'), or, for a namespace import, the whole of m.
type value struct {
	m      *module
	i      int
	ns     bool
	origin string // where it was found, for messages: "const flavors", "./data"
}

func (v value) isArray() bool  { return !v.ns && v.m.tok(v.i).punct("[") }
func (v value) isObject() bool { return !v.ns && v.m.tok(v.i).punct("{") }

func (r *resolver) step() bool {
	r.steps++
	return r.steps <= maxSteps
}

// load reads the module an import specifier names through the siblings
// callback, trying the usual extensions and index files.
func (r *resolver) load(spec string) (*module, bool) {
	if m, ok := r.mods[spec]; ok {
		return m, m != nil
	}
	r.mods[spec] = nil
	if r.siblings == nil || len(r.mods) > maxModules {
		return nil, false
	}
	for _, c := range candidates(spec) {
		if src, ok := r.siblings(c); ok {
			m := newModule(src, c)
			r.mods[spec] = m
			return m, true
		}
	}
	return nil, false
}

// ident resolves a name as seen from module m.
func (r *resolver) ident(m *module, name string, depth int) (value, bool) {
	if depth > maxDepth || !r.step() || m.json {
		return value{}, false
	}
	if i := m.declValue(name); i >= 0 {
		v, ok := r.valueAt(m, i, depth+1)
		if ok && v.origin == "" {
			v.origin = "const " + name
			if m.spec != "" {
				v.origin += " in " + m.spec
			}
		}
		return v, ok
	}
	if b, ok := m.importOf(name); ok {
		return r.imported(m, b, depth+1)
	}
	return value{}, false
}

// imported resolves an import binding written in module m.
func (r *resolver) imported(m *module, b importBinding, depth int) (value, bool) {
	spec := joinSpec(m.spec, b.spec)
	mod, ok := r.load(spec)
	if !ok {
		return value{}, false
	}
	if b.export == "*" {
		return value{m: mod, ns: true, origin: mod.spec}, true
	}
	v, ok := r.export(mod, b.export, depth)
	if ok && v.origin == "" {
		v.origin = b.export + " from " + mod.spec
	}
	return v, ok
}

// export resolves the named (or "default") export of a module.
func (r *resolver) export(mod *module, name string, depth int) (value, bool) {
	if depth > maxDepth || !r.step() {
		return value{}, false
	}
	if mod.json {
		top := value{m: mod, i: 0, origin: mod.spec}
		if name == "default" {
			return top, top.isArray() || top.isObject()
		}
		return r.property(top, name, depth+1)
	}
	if name == "default" {
		if i := mod.defaultExport(); i >= 0 {
			return r.valueAt(mod, i, depth+1)
		}
		return value{}, false
	}
	if v, ok := r.ident(mod, name, depth+1); ok {
		return v, true
	}
	for _, b := range mod.reexportsOf(name) {
		if v, ok := r.imported(mod, b, depth+1); ok {
			return v, true
		}
	}
	return value{}, false
}

// valueAt resolves the expression starting at token i: a literal, a
// parenthesised expression, a (dotted) name, or a call whose first argument
// is a literal (useState([…]), Object.freeze({…}), useState<T[]>([…])).
func (r *resolver) valueAt(m *module, i int, depth int) (value, bool) {
	if depth > maxDepth {
		return value{}, false
	}
	t := m.tok(i)
	switch {
	case t.punct("[") || t.punct("{"):
		return value{m: m, i: i}, true
	case t.punct("("):
		return r.valueAt(m, i+1, depth+1)
	case t.kind != tkIdent:
		return value{}, false
	}
	names, j := []string{t.text}, i+1
	for (m.tok(j).punct(".") || m.tok(j).punct("?.")) && m.tok(j+1).kind == tkIdent {
		names = append(names, m.tok(j+1).text)
		j += 2
	}
	if m.tok(j).punct("<") {
		j = skipGeneric(m, j)
	}
	if m.tok(j).punct("(") {
		if a := m.tok(j + 1); a.punct("[") || a.punct("{") {
			return value{m: m, i: j + 1}, true
		}
		return value{}, false
	}
	return r.chain(m, names, depth+1)
}

// skipGeneric skips a <…> type argument list starting at j.
func skipGeneric(m *module, j int) int {
	angle := 0
	for ; j < len(m.toks); j++ {
		t := m.toks[j]
		switch {
		case t.punct("<"):
			angle++
		case t.punct(">"):
			angle--
			if angle == 0 {
				return j + 1
			}
		case t.punct("=>"):
		case isOpener(t):
			j = m.closeOf(j)
		case t.punct(";"):
			return j
		}
	}
	return j
}

// chain resolves a.b.c: the name a, then each property in turn.
func (r *resolver) chain(m *module, names []string, depth int) (value, bool) {
	v, ok := r.ident(m, names[0], depth+1)
	for _, n := range names[1:] {
		if !ok {
			break
		}
		v, ok = r.property(v, n, depth+1)
	}
	return v, ok
}

// property resolves v.name where v is an object literal or a namespace.
func (r *resolver) property(v value, name string, depth int) (value, bool) {
	if depth > maxDepth || !r.step() {
		return value{}, false
	}
	if v.ns {
		return r.export(v.m, name, depth+1)
	}
	if !v.isObject() {
		return value{}, false
	}
	m := v.m
	for _, p := range m.split(v.i) {
		k := p[0]
		t := m.toks[k]
		if t.punct("...") {
			if sub, ok := r.valueAt(m, k+1, depth+1); ok {
				if got, ok := r.property(sub, name, depth+1); ok {
					return got, true
				}
			}
			continue
		}
		if propKey(t) != name {
			continue
		}
		if p[1]-p[0] == 1 {
			return r.ident(m, name, depth+1) // shorthand { flavors }
		}
		if m.tok(k + 1).punct(":") {
			got, ok := r.valueAt(m, k+2, depth+1)
			if ok && got.origin == "" {
				got.origin = v.origin
			}
			return got, ok
		}
	}
	return value{}, false
}

// propKey returns the key an object property token names, or "".
func propKey(t token) string {
	switch t.kind {
	case tkIdent, tkNumber:
		return t.text
	case tkString:
		return unquote(t.text)
	}
	return ""
}

// elem is one element of an array literal: tokens [a, b) of m.
type elem struct {
	m    *module
	a, b int
}

// elements lists an array literal's elements, expanding spreads of arrays
// that resolve (...night, ...data.more). An unresolved spread counts as one
// element.
func (r *resolver) elements(v value, depth int) []elem {
	var out []elem
	for _, p := range v.m.split(v.i) {
		if depth < maxDepth && v.m.toks[p[0]].punct("...") {
			if sub, ok := r.valueAt(v.m, p[0]+1, depth+1); ok && sub.isArray() {
				out = append(out, r.elements(sub, depth+1)...)
				continue
			}
		}
		out = append(out, elem{m: v.m, a: p[0], b: p[1]})
	}
	return out
}

// objectLength returns N for an object literal {length: N} with a numeric
// literal N (Array.from({length: 3})).
func objectLength(m *module, open int) (int, bool) {
	for _, p := range m.split(open) {
		if m.toks[p[0]].is(tkIdent, "length") && m.tok(p[0]+1).punct(":") && p[1]-p[0] == 3 {
			return parseCount(m.tok(p[0] + 2))
		}
	}
	return 0, false
}

// parseCount reads a small non-negative integer literal.
func parseCount(t token) (int, bool) {
	if t.kind != tkNumber {
		return 0, false
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 0 || n > 100000 {
		return 0, false
	}
	return n, true
}
