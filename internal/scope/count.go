package scope

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Count is a heuristic count of the repeated items a section file renders.
type Count struct {
	// N is the number of items; 0 when nothing repeated was found.
	N int
	// How says which heuristic counted and over what, for messages:
	// "flavors.map over const flavors: 8 items".
	How string
	// Items holds a normalised text of each counted item (white space,
	// quotes, comments and trailing commas do not matter), or nil when the
	// heuristic has no per-item text (Array.from({length: N})).
	Items []string
}

// method is the heuristic that produced a count.
type method uint8

const (
	methodNone method = iota
	methodMap
	methodArray
	methodJSX
)

// item is one counted element.
type item struct {
	text  string   // normalised text of the whole element
	props []string // normalised top-level properties of an object element, else nil
	label string   // a short human name: the name/title string, or the first text
}

// tally is the full result of counting, for CountItems and Check.
type tally struct {
	n      int
	how    string
	items  []item // nil when per-item text is unknown
	method method
	what   string // what holds the items, for fixes: "the flavors array"
}

// CountItems counts the repeated items a React/TSX section file renders.
// Heuristics, most confident first:
//
//  1. .map( over a data array: the outermost .map calls whose receiver
//     resolves to an array literal, in the file or in a file it imports
//     (read through siblings); distinct arrays are summed.
//  2. array literals of objects or strings assigned to a const, even when
//     not mapped; arrays only spread into another counted array are not
//     counted twice.
//  3. the largest run of at least 2 consecutive sibling JSX elements with
//     the same tag name.
//
// siblings receives an import specifier as written in src with an
// extension added ("./data.ts", "../data/flavors/index.ts") and returns the
// file's content; the caller resolves it relative to the section file's
// directory (see FSSiblings). It may be nil.
func CountItems(src []byte, siblings func(importPath string) ([]byte, bool)) Count {
	t := count(src, siblings)
	c := Count{N: t.n, How: t.how}
	if t.items != nil {
		c.Items = make([]string, len(t.items))
		for i, it := range t.items {
			c.Items[i] = it.text
		}
	}
	return c
}

func count(src []byte, siblings func(string) ([]byte, bool)) tally {
	r := newResolver(siblings)
	m := newModule(src, "")
	if t, ok := r.countMaps(m); ok {
		return t
	}
	if t, ok := r.countArrays(m); ok {
		return t
	}
	if t, ok := countSiblings(m); ok {
		return t
	}
	return tally{how: "no repeated items found"}
}

// maxCalls bounds the .map calls and declarations considered in one file.
const maxCalls = 256

// mapCall is one `<receiver>.map(` in a file: the index of "map" and its
// argument list.
type mapCall struct {
	name, open, close int
}

func (r *resolver) countMaps(m *module) (tally, bool) {
	var calls []mapCall
	for i := 1; i+1 < len(m.toks) && len(calls) < maxCalls; i++ {
		if m.toks[i].is(tkIdent, "map") && (m.toks[i-1].punct(".") || m.toks[i-1].punct("?.")) && m.toks[i+1].punct("(") {
			calls = append(calls, mapCall{name: i, open: i + 1, close: m.closeOf(i + 1)})
		}
	}
	type key struct {
		m *module
		i int
	}
	seen := map[key]bool{}
	var (
		t     = tally{method: methodMap, items: []item{}}
		hows  []string
		whats []string
	)
	for _, c := range calls {
		if nestedCall(c, calls) {
			continue
		}
		part, ok := r.receiver(m, c.name-2, 0)
		if !ok {
			continue
		}
		if part.v.m != nil {
			k := key{part.v.m, part.v.i}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		t.n += part.n
		if part.items == nil || t.items == nil {
			t.items = nil
		} else {
			t.items = append(t.items, part.items...)
		}
		hows = append(hows, fmt.Sprintf("%s: %s", part.how, plural(part.n, "item")))
		whats = append(whats, part.name)
	}
	if len(hows) == 0 {
		return tally{}, false
	}
	t.how = strings.Join(hows, "; ")
	switch {
	case len(whats) == 1:
		t.what = "the " + whats[0] + " array"
	default:
		t.what = "the mapped arrays (" + strings.Join(whats, ", ") + ")"
	}
	return t, true
}

// nestedCall reports whether c lies inside the callback of another map.
func nestedCall(c mapCall, calls []mapCall) bool {
	for _, d := range calls {
		if d.open < c.name && c.name < d.close {
			return true
		}
	}
	return false
}

// mapPart is what one .map receiver resolved to.
type mapPart struct {
	v     value // the array literal (zero for a length-only count)
	n     int
	items []item
	how   string
	name  string
}

// receiver resolves the expression ending at token e, the receiver of a
// .map call, to the items it iterates.
func (r *resolver) receiver(m *module, e int, depth int) (mapPart, bool) {
	if depth > maxDepth || !r.step() {
		return mapPart{}, false
	}
	t := m.tok(e)
	switch {
	case t.kind == tkIdent:
		s := e
		names := []string{t.text}
		for (m.tok(s-1).punct(".") || m.tok(s-1).punct("?.")) && m.tok(s-2).kind == tkIdent {
			s -= 2
			names = append([]string{m.toks[s].text}, names...)
		}
		if p := m.tok(s - 1); p.punct(".") || p.punct("?.") {
			return mapPart{}, false // foo().bar.map: not a plain name
		}
		v, ok := r.chain(m, names, depth+1)
		if !ok || !v.isArray() {
			return mapPart{}, false
		}
		name := strings.Join(names, ".")
		return r.arrayPart(v, name, name+".map over "+v.origin), true
	case t.punct("]"):
		o := m.match[e]
		if o < 0 {
			return mapPart{}, false
		}
		if p := m.tok(o - 1); o > 0 && (p.kind == tkIdent || p.punct(")") || p.punct("]")) {
			return mapPart{}, false // an index expression: a[0].map
		}
		return r.arrayPart(value{m: m, i: o}, "inline", "[…].map over an inline array"), true
	case t.punct(")"):
		return r.callReceiver(m, e, depth)
	}
	return mapPart{}, false
}

// passThrough names array methods whose result iterates (a subset of) the
// receiver's items: the receiver is counted.
var passThrough = map[string]bool{
	"slice": true, "filter": true, "sort": true, "reverse": true, "toSorted": true,
	"toReversed": true, "fill": true, "concat": true,
}

// callReceiver handles receivers that are calls: Array.from({length: N}),
// Array.from(list), Object.values(obj), list.filter(…), Array(N).fill(…).
func (r *resolver) callReceiver(m *module, e int, depth int) (mapPart, bool) {
	o := m.match[e]
	if o <= 0 {
		return mapPart{}, false
	}
	fn := m.tok(o - 1)
	if fn.kind != tkIdent {
		return mapPart{}, false
	}
	dotted := m.tok(o - 2).punct(".")
	obj := m.tok(o - 3)
	arg := o + 1
	switch {
	case dotted && obj.is(tkIdent, "Array") && fn.text == "from":
		if m.tok(arg).punct("{") {
			if n, ok := objectLength(m, arg); ok {
				return mapPart{n: n, how: fmt.Sprintf("Array.from({length: %d}).map", n), name: "Array.from"}, true
			}
			return mapPart{}, false
		}
		v, ok := r.valueAt(m, arg, depth+1)
		if !ok || !v.isArray() {
			return mapPart{}, false
		}
		return r.arrayPart(v, "Array.from", "Array.from(…).map over "+originOr(v, "an inline array")), true
	case dotted && obj.is(tkIdent, "Object") && (fn.text == "values" || fn.text == "entries" || fn.text == "keys"):
		v, ok := r.valueAt(m, arg, depth+1)
		if !ok || !v.isObject() {
			return mapPart{}, false
		}
		var items []item
		for _, p := range v.m.split(v.i) {
			items = append(items, v.m.item(p[0], p[1]))
		}
		return mapPart{v: v, n: len(items), items: items, how: "Object." + fn.text + "(…).map over " + originOr(v, "an inline object"), name: "object"}, true
	case dotted && passThrough[fn.text]:
		return r.receiver(m, o-3, depth+1)
	case !dotted && fn.text == "Array":
		if n, ok := parseCount(m.tok(arg)); ok && m.tok(arg+1).punct(")") {
			return mapPart{n: n, how: fmt.Sprintf("Array(%d).map", n), name: "Array"}, true
		}
	}
	return mapPart{}, false
}

func originOr(v value, s string) string {
	if v.origin != "" {
		return v.origin
	}
	return s
}

func (r *resolver) arrayPart(v value, name, how string) mapPart {
	els := r.elements(v, 0)
	items := make([]item, len(els))
	for i, e := range els {
		items[i] = e.m.item(e.a, e.b)
	}
	return mapPart{v: v, n: len(items), items: items, how: how, name: name}
}

// countArrays implements heuristic 2: const array literals of objects or
// strings.
func (r *resolver) countArrays(m *module) (tally, bool) {
	type decl struct {
		name string
		v    value
	}
	var decls []decl
	spread := map[string]bool{}
	for i := 0; i+1 < len(m.toks) && len(decls) < maxCalls; i++ {
		t := m.toks[i]
		if t.kind != tkIdent || (t.text != "const" && t.text != "let" && t.text != "var") || m.toks[i+1].kind != tkIdent {
			continue
		}
		name := m.toks[i+1].text
		j := i + 2
		if m.tok(j).punct(":") {
			if j = m.skipType(j + 1); j < 0 {
				continue
			}
		}
		if !m.tok(j).punct("=") || !m.tok(j+1).punct("[") {
			continue
		}
		v := value{m: m, i: j + 1, origin: "const " + name}
		if !dataArray(m, v.i) {
			continue
		}
		for _, p := range m.split(v.i) {
			if m.toks[p[0]].punct("...") && m.tok(p[0]+1).kind == tkIdent {
				spread[m.toks[p[0]+1].text] = true
			}
		}
		decls = append(decls, decl{name, v})
	}
	t := tally{method: methodArray, items: []item{}}
	var hows, names []string
	for _, d := range decls {
		if spread[d.name] {
			continue
		}
		part := r.arrayPart(d.v, d.name, "array literal const "+d.name)
		t.n += part.n
		t.items = append(t.items, part.items...)
		hows = append(hows, fmt.Sprintf("%s: %s", part.how, plural(part.n, "item")))
		names = append(names, d.name)
	}
	if len(hows) == 0 {
		return tally{}, false
	}
	t.how = strings.Join(hows, "; ")
	if len(names) == 1 {
		t.what = "the " + names[0] + " array"
	} else {
		t.what = "the arrays " + strings.Join(names, ", ")
	}
	return t, true
}

// dataArray reports whether the array literal at open holds data: at
// least one element, and all non-spread elements objects, or all strings.
func dataArray(m *module, open int) bool {
	parts := m.split(open)
	objects, strs, others := 0, 0, 0
	for _, p := range parts {
		t := m.toks[p[0]]
		switch {
		case t.punct("..."):
		case t.punct("{") && m.closeOf(p[0]) >= p[1]-1:
			objects++
		case (t.kind == tkString || t.kind == tkTemplate) && p[1]-p[0] == 1:
			strs++
		default:
			others++
		}
	}
	return len(parts) > 0 && others == 0 && (objects == 0 || strs == 0)
}

// countSiblings implements heuristic 3: the largest run of consecutive
// sibling JSX elements sharing a tag name.
func countSiblings(m *module) (tally, bool) {
	w := &jsxWalker{m: m}
	w.scan(0, len(m.toks), 0)
	if len(w.best) < 2 {
		return tally{}, false
	}
	items := make([]item, len(w.best))
	for i, e := range w.best {
		items[i] = m.item(e[0], e[1])
	}
	name := "<" + w.bestName + ">"
	return tally{
		n:      len(items),
		how:    fmt.Sprintf("%d consecutive %s siblings", len(items), name),
		items:  items,
		method: methodJSX,
		what:   "the " + name + " list",
	}, true
}

// jsxWalker walks JSX elements in a token stream, remembering the longest
// run of same-tag siblings.
type jsxWalker struct {
	m        *module
	best     [][2]int
	bestName string
}

// scan walks tokens [a, b) outside JSX children, entering each element.
func (w *jsxWalker) scan(a, b, depth int) {
	for j := a; j < b; {
		if w.m.toks[j].kind == tkJSXOpen {
			j = w.element(j, b, depth+1)
			continue
		}
		j++
	}
}

// element walks the element opening at i and returns the index after it.
func (w *jsxWalker) element(i, b, depth int) int {
	m := w.m
	j := i + 1
	for j < b {
		t := m.toks[j]
		if t.kind == tkJSXSelfClose {
			return j + 1
		}
		if t.kind == tkJSXEnd {
			j++
			break
		}
		if t.punct("{") {
			c := min(m.closeOf(j), b)
			w.scan(j+1, c, depth)
			j = c + 1
			continue
		}
		j++
	}
	if depth > maxNest {
		return b
	}
	var (
		run     [][2]int
		runName string
	)
	flush := func() {
		if len(run) > len(w.best) {
			w.best, w.bestName = run, runName
		}
		run = nil
	}
	for j < b {
		t := m.toks[j]
		switch {
		case t.kind == tkJSXClose:
			flush()
			return j + 1
		case t.kind == tkJSXOpen:
			e := w.element(j, b, depth+1)
			if len(run) > 0 && runName != t.text {
				flush()
			}
			runName = t.text
			run = append(run, [2]int{j, e})
			j = e
		case t.punct("{"):
			c := min(m.closeOf(j), b)
			if c > j+1 {
				flush()
				w.scan(j+1, c, depth)
			}
			j = c + 1
		default:
			flush()
			j++
		}
	}
	flush()
	return b
}

// item builds the item for tokens [a, b).
func (m *module) item(a, b int) item {
	it := item{text: m.norm(a, b), label: m.label(a, b)}
	if m.tok(a).punct("{") && m.closeOf(a) == b-1 {
		it.props = []string{}
		for _, p := range m.split(a) {
			it.props = append(it.props, m.norm(p[0], p[1]))
		}
	}
	return it
}

// norm renders tokens [a, b) canonically: tokens separated by one space,
// strings in double quotes, string keys bare, commas before a closer
// dropped, JSX text with its white space collapsed.
func (m *module) norm(a, b int) string {
	var sb strings.Builder
	for j := a; j < b; j++ {
		t := m.toks[j]
		if t.punct(",") && (j+1 == b || isCloser(m.toks[j+1])) {
			continue
		}
		s := t.text
		switch t.kind {
		case tkString, tkJSXString:
			s = unquote(s)
			if !(t.kind == tkString && m.tok(j+1).punct(":") && isIdentName(s)) {
				s = `"` + s + `"`
			}
		case tkTemplate:
			if !strings.Contains(s, "${") {
				s = `"` + unquote(s) + `"`
			}
		case tkJSXText:
			s = strings.Join(strings.Fields(s), " ")
		case tkJSXOpen:
			s = "<" + s
		case tkJSXClose:
			s = "</" + s + ">"
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(s)
	}
	return sb.String()
}

func isIdentName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}

// labelKeys are the object properties that usually name an item.
var labelKeys = [...]string{"name", "title", "label", "heading", "text"}

// label returns a short name for the element [a, b) as a person would
// recognise it: for an object, its name/title property (or its id/key/slug);
// for a JSX element, its visible text, else its key, title, alt or label
// attribute; otherwise its first string, else its text. Class names and
// styles never name an item: four <li className="drink"> differ only in
// their text.
func (m *module) label(a, b int) string {
	if m.tok(a).kind == tkJSXOpen {
		if l := m.jsxLabel(a, b); l != "" {
			return l
		}
	}
	if m.tok(a).punct("{") {
		for _, key := range labelKeys {
			for _, p := range m.split(a) {
				if propKey(m.toks[p[0]]) == key && m.tok(p[0]+1).punct(":") && p[1]-p[0] == 3 {
					if v := m.toks[p[0]+2]; v.kind == tkString || v.kind == tkTemplate {
						return clip(unquote(v.text))
					}
				}
			}
		}
	}
	if m.tok(a).punct("{") {
		for _, key := range keyKeys {
			for _, p := range m.split(a) {
				if propKey(m.toks[p[0]]) == key && m.tok(p[0]+1).punct(":") && p[1]-p[0] == 3 {
					if v := m.toks[p[0]+2]; v.kind == tkString || v.kind == tkTemplate || v.kind == tkNumber {
						return clip(unquote(v.text))
					}
				}
			}
		}
	}
	for j := a; j < b; j++ {
		switch t := m.toks[j]; t.kind {
		case tkString, tkTemplate, tkJSXString:
			if m.tok(j+1).punct(":") || (t.kind == tkJSXString && styleAttr[m.attrOf(j)]) {
				continue
			}
			return clip(unquote(t.text))
		case tkJSXText:
			return clip(strings.Join(strings.Fields(t.text), " "))
		}
	}
	return clip(m.norm(a, b))
}

// keyKeys are the object properties that identify an item without naming
// it, tried after labelKeys.
var keyKeys = [...]string{"id", "key", "slug"}

// jsxAttrKeys are the attributes that name a JSX element without visible
// text, in order of preference.
var jsxAttrKeys = [...]string{"key", "title", "alt", "aria-label", "label", "name", "id"}

// styleAttr are attributes whose values say how an element looks, never
// which one it is.
var styleAttr = map[string]bool{"className": true, "class": true, "style": true, "tw": true}

// jsxLabel returns the visible text of the JSX element [a, b), its text
// pieces joined by single spaces, else the value of its first naming
// attribute, else "".
func (m *module) jsxLabel(a, b int) string {
	var words []string
	for j := a; j < b; j++ {
		if t := m.toks[j]; t.kind == tkJSXText {
			words = append(words, strings.Fields(t.text)...)
		}
	}
	if len(words) > 0 {
		return clip(strings.Join(words, " "))
	}
	for _, key := range jsxAttrKeys {
		for j := a + 1; j+2 < b && m.toks[j].kind != tkJSXEnd && m.toks[j].kind != tkJSXSelfClose; j++ {
			if m.toks[j].is(tkJSXAttr, key) && m.toks[j+1].punct("=") {
				switch v := m.toks[j+2]; v.kind {
				case tkJSXString:
					return clip(unquote(v.text))
				case tkPunct:
					if v.text == "{" {
						if s := m.tok(j + 3); (s.kind == tkString || s.kind == tkTemplate) && m.tok(j+4).punct("}") {
							return clip(unquote(s.text))
						}
					}
				}
			}
		}
	}
	return ""
}

// attrOf returns the name of the JSX attribute whose value is the token at
// j, or "".
func (m *module) attrOf(j int) string {
	if m.tok(j-1).punct("=") && m.tok(j-2).kind == tkJSXAttr {
		return m.tok(j - 2).text
	}
	return ""
}

// clip shortens s to at most 40 runes.
func clip(s string) string { return clipN(s, 40) }

// clipN shortens s to at most limit runes, ending it with "…" when cut.
func clipN(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
