package plan

import (
	"bytes"
	"strings"
)

// Parse parses a plan. Errors are *SyntaxError naming DefaultFile.
func Parse(src []byte) (*Node, error) {
	return ParseFile(DefaultFile, src)
}

// ParseFile parses a plan, naming file in errors. Errors are *SyntaxError.
// A UTF-8 byte order mark, which some editors write, is not part of the
// plan.
func ParseFile(file string, src []byte) (*Node, error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	p := &parser{s: newScanner(file, src)}
	root, err := p.file()
	if err != nil {
		return nil, err
	}
	return root, nil
}

type parser struct {
	s *scanner
	// slab holds prop values; maps point into it, so a plan's values take
	// a few allocations rather than one each.
	slab []Value
}

// keep stores v in the slab and returns a pointer to it.
func (p *parser) keep(v Value) *Value {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]Value, 0, 256)
	}
	p.slab = append(p.slab, v)
	return &p.slab[len(p.slab)-1]
}

// file parses the whole input: prologue, optional export default, the root
// element and nothing after it.
func (p *parser) file() (*Node, error) {
	s := p.s
	if err := s.checkUTF8(); err != nil {
		return nil, err
	}
	// checkUTF8 may have moved the scanner only when it failed.
	if err := p.prologue(); err != nil {
		return nil, err
	}
	paren := false
	if s.hasPrefix("export") && !isIdentPart(s.peekAt(len("export"))) {
		s.skip(len("export"))
		if _, err := s.skipSpaceAndComments(); err != nil {
			return nil, err
		}
		if word := s.ident(); word != "default" {
			return nil, s.errorf(`expected "default" after "export" (write: export default ( <App …> … </App> ))`)
		}
		if _, err := s.skipSpaceAndComments(); err != nil {
			return nil, err
		}
	}
	if s.peek() == '(' {
		paren = true
		s.next()
		if _, err := s.skipSpaceAndComments(); err != nil {
			return nil, err
		}
	}
	if s.peek() != '<' {
		return nil, s.errorf("expected the root element, such as <App …> or <Plan …>, found %s", s.found())
	}
	root, err := p.element(1)
	if err != nil {
		return nil, err
	}
	if _, err := s.skipSpaceAndComments(); err != nil {
		return nil, err
	}
	if paren {
		if s.peek() != ')' {
			return nil, s.errorf("expected ) to close export default ( … ) after the root element, found %s", s.found())
		}
		s.next()
		if _, err := s.skipSpaceAndComments(); err != nil {
			return nil, err
		}
	}
	if s.peek() == ';' {
		s.next()
		if _, err := s.skipSpaceAndComments(); err != nil {
			return nil, err
		}
	}
	if !s.eof() {
		if s.peek() == '<' {
			return nil, s.errorf("expected end of file, found a second root element: a plan has exactly one root element (<App> or <Plan>); put everything inside it")
		}
		return nil, s.errorf("expected end of file after the root element, found %s", s.found())
	}
	return root, nil
}

// prologue skips leading comments and import lines.
func (p *parser) prologue() error {
	s := p.s
	for {
		if _, err := s.skipSpaceAndComments(); err != nil {
			return err
		}
		if !s.hasPrefix("import") || isIdentPart(s.peekAt(len("import"))) {
			return nil
		}
		if err := p.importLine(); err != nil {
			return err
		}
	}
}

// importLine skips an import statement: up to a ; or the end of a line
// that is outside braces and quotes.
func (p *parser) importLine() error {
	s := p.s
	start := s.pos()
	depth := 0
	for !s.eof() {
		c := s.peek()
		switch {
		case c == '\'' || c == '"' || c == '`':
			if _, err := s.jsString(); err != nil {
				return err
			}
			continue
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == ';' && depth <= 0:
			s.next()
			return nil
		case c == '\n' && depth <= 0:
			s.next()
			return nil
		}
		s.next()
	}
	if depth > 0 {
		return s.errAt(start, "unterminated import: expected } to close the braces of this import")
	}
	return nil
}

// element parses an element at nesting depth; the scanner is at '<'.
func (p *parser) element(depth int) (*Node, error) {
	s := p.s
	start := s.pos()
	if depth > MaxDepth {
		return nil, s.errorf("nesting deeper than %d: a plan is a shallow tree; flatten it", MaxDepth)
	}
	s.next() // '<'
	name := s.ident()
	if name == "" {
		if s.peek() == '>' {
			return nil, s.errorf("fragments <>…</> are not supported: use a component such as <App> or <Content>")
		}
		return nil, s.errorf("expected a component name after <, found %s", s.found())
	}
	n := &Node{Component: name, Line: start.line, Col: start.col}
	selfClosing, err := p.props(n)
	if err != nil {
		return nil, err
	}
	if selfClosing {
		n.Markers = parseMarkers(n.Comments)
		return n, nil
	}
	if err := p.children(n, start, depth); err != nil {
		return nil, err
	}
	return n, nil
}

// props parses the props of n up to > or />, reporting which.
func (p *parser) props(n *Node) (selfClosing bool, err error) {
	s := p.s
	for {
		cs, err := s.skipSpaceAndComments()
		if err != nil {
			return false, err
		}
		n.Comments = append(n.Comments, cs...)
		switch {
		case s.hasPrefix("/>"):
			s.skip(2)
			return true, nil
		case s.peek() == '>':
			s.next()
			return false, nil
		case s.eof():
			return false, s.errAt(pos{n.Line, n.Col}, "unterminated <%s> tag: expected > or /> to close it", n.Component)
		case s.peek() == '{':
			return false, s.errorf("spread props {…} are not supported in <%s>: write each prop as name=\"value\" or name={value}", n.Component)
		}
		at := s.pos()
		name := s.propName()
		if name == "" {
			return false, s.errorf("expected a prop name, > or /> in <%s>, found %s", n.Component, s.found())
		}
		var v Value
		s.skipSpace()
		if s.peek() == '=' {
			s.next()
			s.skipSpace()
			v, err = p.propValue(name, 1)
			if err != nil {
				return false, err
			}
		} else {
			v = Value{Kind: Bool, Bool: true, Line: at.line, Col: at.col}
		}
		if n.Props == nil {
			n.Props = make(map[string]*Value, 4)
		}
		if prev, dup := n.Props[name]; dup {
			return false, s.errAt(at, "duplicate prop %s in <%s> (first set at line %d): keep one", name, n.Component, prev.Line)
		}
		n.Props[name] = p.keep(v)
	}
}

// propValue parses what follows name=.
func (p *parser) propValue(name string, depth int) (Value, error) {
	s := p.s
	at := s.pos()
	switch s.peek() {
	case '"', '\'':
		str, err := s.attrString()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: String, Str: str, Line: at.line, Col: at.col}, nil
	case '{':
		s.next()
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		if s.peek() == '}' {
			return Value{}, s.errorf("empty value for prop %s: write a literal inside { }, or leave the prop out", name)
		}
		v, err := p.literal(depth)
		if err != nil {
			return Value{}, err
		}
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		if s.peek() != '}' {
			return Value{}, s.errorf("expected } to close the value of prop %s, found %s (a plan holds literal values only)", name, s.found())
		}
		s.next()
		return v, nil
	}
	return Value{}, s.errorf(`expected a value for prop %s: "string", {number}, {true}, {[…]} or {{…}}, found %s`, name, s.found())
}

// literal parses a string, number, boolean, array or object literal.
func (p *parser) literal(depth int) (Value, error) {
	s := p.s
	if depth > MaxDepth {
		return Value{}, s.errorf("nesting deeper than %d: a plan is a shallow tree; flatten it", MaxDepth)
	}
	at := s.pos()
	c := s.peek()
	switch {
	case c == '"' || c == '\'' || c == '`':
		str, err := s.jsString()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: String, Str: str, Line: at.line, Col: at.col}, nil
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		f, err := s.number()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: Number, Num: f, Line: at.line, Col: at.col}, nil
	case c == '[':
		return p.array(at, depth)
	case c == '{':
		return p.object(at, depth)
	case isIdentStart(c):
		word := s.ident()
		switch word {
		case "true", "false":
			return Value{Kind: Bool, Bool: word == "true", Line: at.line, Col: at.col}, nil
		case "null", "undefined":
			return Value{}, s.errAt(at, "%s is not a plan value: leave the prop out instead", word)
		}
		return Value{}, s.errAt(at, "expected a literal value (string, number, true/false, array or object), found identifier %s: a plan holds literal values only", word)
	}
	return Value{}, s.errorf("expected a literal value (string, number, true/false, array or object), found %s", s.found())
}

// array parses [a, b, …]; the scanner is at '['.
func (p *parser) array(at pos, depth int) (Value, error) {
	s := p.s
	s.next()
	v := Value{Kind: Array, Line: at.line, Col: at.col}
	for {
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		if s.peek() == ']' {
			s.next()
			return v, nil
		}
		if s.eof() {
			return Value{}, s.errAt(at, "unterminated array: expected ] to close the [ opened here")
		}
		e, err := p.literal(depth + 1)
		if err != nil {
			return Value{}, err
		}
		v.List = append(v.List, e)
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		switch {
		case s.peek() == ',':
			s.next()
		case s.peek() == ']':
		case s.eof():
			return Value{}, s.errAt(at, "unterminated array: expected ] to close the [ opened here")
		default:
			return Value{}, s.errorf("expected , or ] in array, found %s", s.found())
		}
	}
}

// object parses { key: value, … }; the scanner is at '{'.
func (p *parser) object(at pos, depth int) (Value, error) {
	s := p.s
	s.next()
	v := Value{Kind: Object, Line: at.line, Col: at.col}
	for {
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		if s.peek() == '}' {
			s.next()
			return v, nil
		}
		if s.eof() {
			return Value{}, s.errAt(at, "unterminated object: expected } to close the { opened here")
		}
		var key string
		switch c := s.peek(); {
		case c == '"' || c == '\'':
			k, err := s.jsString()
			if err != nil {
				return Value{}, err
			}
			key = k
		case isIdentStart(c):
			key = s.ident()
		default:
			return Value{}, s.errorf("expected an object key (name or string) or }, found %s", s.found())
		}
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		if s.peek() != ':' {
			return Value{}, s.errorf("expected : after object key %s, found %s", key, s.found())
		}
		s.next()
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		e, err := p.literal(depth + 1)
		if err != nil {
			return Value{}, err
		}
		if _, dup := v.Get(key); dup {
			return Value{}, s.errAt(pos{e.Line, e.Col}, "duplicate object key %s: keep one", key)
		}
		v.Fields = append(v.Fields, Field{Key: key, Value: e})
		if _, err := s.skipSpaceAndComments(); err != nil {
			return Value{}, err
		}
		switch {
		case s.peek() == ',':
			s.next()
		case s.peek() == '}':
		case s.eof():
			return Value{}, s.errAt(at, "unterminated object: expected } to close the { opened here")
		default:
			return Value{}, s.errorf("expected , or } in object, found %s", s.found())
		}
	}
}

// children parses the children of n up to and including its closing tag.
// It also decides which element each comment belongs to (see the package
// doc): pending holds comments that may belong to the next element.
func (p *parser) children(n *Node, open pos, depth int) error {
	s := p.s
	var (
		text       strings.Builder
		pending    []Comment
		sawElement bool
	)
	flush := func() {
		n.Comments = append(n.Comments, pending...)
		pending = nil
	}
	for {
		switch {
		case s.eof():
			return s.errAt(open, "unclosed <%s>: expected </%s> before the end of the file", n.Component, n.Component)
		case s.hasPrefix("</"):
			at := s.pos()
			s.skip(2)
			s.skipSpace()
			name := s.ident()
			s.skipSpace()
			if name != n.Component {
				if name == "" {
					return s.errAt(at, "expected </%s> to close <%s> from line %d, found </ followed by %s", n.Component, n.Component, open.line, s.found())
				}
				return s.errAt(at, "mismatched closing tag: expected </%s> to close <%s> from line %d, found </%s>", n.Component, n.Component, open.line, name)
			}
			if s.peek() != '>' {
				return s.errorf("expected > to end </%s, found %s", name, s.found())
			}
			s.next()
			flush()
			n.Text = joinText(text.String())
			n.Markers = parseMarkers(n.Comments)
			return nil
		case s.peek() == '<':
			child, err := p.element(depth + 1)
			if err != nil {
				return err
			}
			if len(pending) > 0 {
				if takesPrecedingComments(child.Component) && (sawElement || n.Component == "Content") {
					child.Comments = append(pending, child.Comments...)
					child.Markers = parseMarkers(child.Comments)
					pending = nil
				} else {
					flush()
				}
			}
			sawElement = true
			n.Children = append(n.Children, child)
		case s.peek() == '{':
			str, comments, err := p.childExpression(n)
			if err != nil {
				return err
			}
			pending = append(pending, comments...)
			if str != "" {
				flush()
				text.WriteString(str)
			}
		default:
			t := s.text()
			if len(bytes.TrimSpace(t)) != 0 {
				flush()
				text.Write(t)
			} else if text.Len() > 0 {
				// Space between pieces of text still separates them.
				text.Write(t)
			}
		}
	}
}

// childExpression parses { … } among children: comments or one string.
func (p *parser) childExpression(n *Node) (string, []Comment, error) {
	s := p.s
	open := s.pos()
	s.next() // '{'
	comments, err := s.skipSpaceAndComments()
	if err != nil {
		return "", nil, err
	}
	var str string
	switch c := s.peek(); {
	case c == '}':
	case c == '"' || c == '\'' || c == '`':
		str, err = s.jsString()
		if err != nil {
			return "", nil, err
		}
		more, err := s.skipSpaceAndComments()
		if err != nil {
			return "", nil, err
		}
		comments = append(comments, more...)
	case s.eof():
		return "", nil, s.errAt(open, "unterminated { in <%s>: expected }", n.Component)
	default:
		return "", nil, s.errorf("expected a comment {/* … */} or a string {\"…\"} inside { } in <%s>, found %s: a plan holds no JavaScript expressions", n.Component, s.found())
	}
	if s.peek() != '}' {
		return "", nil, s.errorf("expected } to close the { opened at line %d, found %s", open.line, s.found())
	}
	s.next()
	return str, comments, nil
}

// takesPrecedingComments reports whether a comment just before an element
// of this component can belong to it.
func takesPrecedingComments(component string) bool {
	return component == "Section" || component == "Screen"
}

// joinText normalises raw text children: each line trimmed, runs of blank
// lines collapsed to one, blank lines at either end removed.
func joinText(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	lines := strings.Split(raw, "\n")
	out := make([]string, 0, len(lines))
	blank := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
