package scope

import "strings"

// tokKind classifies a token of the JS/TS/JSX source the counter reads.
type tokKind uint8

const (
	tkPunct        tokKind = iota // operators and brackets: ( ) [ ] { } , . ?. ... => = : ;
	tkIdent                       // identifiers and keywords
	tkNumber                      // numeric literals
	tkString                      // '…' or "…", text holds the raw literal with quotes
	tkTemplate                    // `…` with any ${} substitutions, raw
	tkRegex                       // /…/flags
	tkJSXOpen                     // "<Name" of an opening tag; text is the tag name ("" for a fragment)
	tkJSXAttr                     // an attribute name inside an opening tag
	tkJSXString                   // a quoted attribute value, raw with quotes
	tkJSXEnd                      // ">" ending an opening tag (children follow)
	tkJSXSelfClose                // "/>" ending a self-closing tag
	tkJSXClose                    // "</Name>"; text is the tag name
	tkJSXText                     // non-blank text between JSX tags, raw
)

// token is one lexeme; pos is its byte offset in the source.
type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) is(kind tokKind, text string) bool { return t.kind == kind && t.text == text }

func (t token) punct(text string) bool { return t.is(tkPunct, text) }

// maxNest bounds the nesting of braces, template substitutions and JSX
// elements the lexer follows; anything deeper is skipped to the end of the
// input so hostile input cannot exhaust the stack.
const maxNest = 256

// lexer turns source into tokens. It knows enough of JavaScript to find the
// ends of strings, template literals, comments and regular expressions, and
// enough of JSX to keep text like "Don't, [really]" out of the token stream.
type lexer struct {
	src   []byte
	pos   int
	toks  []token
	depth int
}

// tokenize lexes src. It never fails: malformed input yields a best-effort
// token stream, unterminated literals run to the end of the line or input.
func tokenize(src []byte) []token {
	lx := &lexer{src: src}
	for lx.pos < len(lx.src) {
		lx.js(false)
		if lx.pos < len(lx.src) && lx.src[lx.pos] == '}' {
			lx.emit(tkPunct, lx.pos, lx.pos+1)
			lx.pos++
		}
	}
	return lx.toks
}

func (lx *lexer) emit(kind tokKind, start, end int) {
	lx.toks = append(lx.toks, token{kind: kind, text: string(lx.src[start:end]), pos: start})
}

func (lx *lexer) peek(off int) byte {
	if lx.pos+off < len(lx.src) {
		return lx.src[lx.pos+off]
	}
	return 0
}

func (lx *lexer) prev() (token, bool) {
	if len(lx.toks) == 0 {
		return token{}, false
	}
	return lx.toks[len(lx.toks)-1], true
}

// enter and leave bound recursion; enter reports false (and abandons the
// rest of the input) when the nesting is too deep.
func (lx *lexer) enter() bool {
	lx.depth++
	if lx.depth > maxNest {
		lx.pos = len(lx.src)
		return false
	}
	return true
}

func (lx *lexer) leave() { lx.depth-- }

// skipSpace skips white space and comments.
func (lx *lexer) skipSpace() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			lx.pos++
		case c == '/' && lx.peek(1) == '/':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		case c == '/' && lx.peek(1) == '*':
			end := strings.Index(string(lx.src[lx.pos+2:]), "*/")
			if end < 0 {
				lx.pos = len(lx.src)
			} else {
				lx.pos += 2 + end + 2
			}
		default:
			return
		}
	}
}

// js lexes JavaScript until the end of input or, when inBrace, until an
// unmatched '}' (left unconsumed for the caller).
func (lx *lexer) js(inBrace bool) {
	if !lx.enter() {
		return
	}
	defer lx.leave()
	braces := 0
	for {
		lx.skipSpace()
		if lx.pos >= len(lx.src) {
			return
		}
		start := lx.pos
		c := lx.src[lx.pos]
		switch {
		case c == '}':
			if braces == 0 {
				if inBrace {
					return
				}
				return // top level: tokenize emits it and carries on
			}
			braces--
			lx.pos++
			lx.emit(tkPunct, start, lx.pos)
		case c == '{':
			braces++
			lx.pos++
			lx.emit(tkPunct, start, lx.pos)
		case c == '\'' || c == '"':
			lx.quoted(c)
			lx.emit(tkString, start, lx.pos)
		case c == '`':
			lx.template()
			lx.emit(tkTemplate, start, lx.pos)
		case isDigit(c) || (c == '.' && isDigit(lx.peek(1))):
			lx.number()
			lx.emit(tkNumber, start, lx.pos)
		case isIdentStart(c):
			lx.ident()
			lx.emit(tkIdent, start, lx.pos)
		case c == '<' && lx.jsxAllowed() && (isIdentStart(lx.peek(1)) || lx.peek(1) == '>'):
			lx.jsxElement()
		case c == '/' && lx.regexAllowed():
			lx.regex()
			lx.emit(tkRegex, start, lx.pos)
		default:
			lx.pos += punctLen(lx.src[lx.pos:])
			lx.emit(tkPunct, start, lx.pos)
		}
	}
}

// multiPuncts are the operators lexed as one token, longest first.
var multiPuncts = [...]string{"===", "!==", "...", "=>", "?.", "&&", "||", "??", "==", "!=", "<=", ">="}

func punctLen(b []byte) int {
	for _, p := range multiPuncts {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			if p == "?." && len(b) > 2 && isDigit(b[2]) {
				continue // a ternary followed by .5
			}
			return len(p)
		}
	}
	return 1
}

// exprStart reports whether the previous token leaves the lexer where an
// expression may begin, which decides whether '<' opens JSX and '/' a regex.
func (lx *lexer) exprStart() bool {
	t, ok := lx.prev()
	if !ok {
		return true
	}
	switch t.kind {
	case tkPunct:
		switch t.text {
		case ")", "]", "}":
			return false
		}
		return true
	case tkIdent:
		switch t.text {
		case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete",
			"void", "throw", "instanceof", "yield", "await", "default":
			return true
		}
		return false
	case tkJSXEnd, tkJSXText, tkJSXClose, tkJSXSelfClose:
		return true
	}
	return false
}

func (lx *lexer) jsxAllowed() bool {
	t, ok := lx.prev()
	if ok && t.kind == tkPunct && t.text == "}" {
		return false
	}
	return lx.exprStart()
}

func (lx *lexer) regexAllowed() bool { return lx.exprStart() }

// quoted consumes a '…' or "…" literal; a newline ends an unterminated one.
func (lx *lexer) quoted(q byte) {
	lx.pos++
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
		case c == q:
			lx.pos++
			return
		case c == '\n':
			return
		default:
			lx.pos++
		}
	}
	lx.pos = min(lx.pos, len(lx.src))
}

// template consumes a template literal, lexing (and discarding) the tokens
// of each ${} substitution so braces and strings inside it are respected.
func (lx *lexer) template() {
	lx.pos++
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
		case c == '`':
			lx.pos++
			return
		case c == '$' && lx.peek(1) == '{':
			lx.pos += 2
			n := len(lx.toks)
			lx.js(true)
			lx.toks = lx.toks[:n]
			if lx.pos < len(lx.src) {
				lx.pos++ // the closing '}'
			}
		default:
			lx.pos++
		}
	}
	lx.pos = min(lx.pos, len(lx.src))
}

func (lx *lexer) number() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case isDigit(c) || isLetter(c) || c == '.' || c == '_':
			lx.pos++
		case (c == '+' || c == '-') && (lx.src[lx.pos-1] == 'e' || lx.src[lx.pos-1] == 'E'):
			lx.pos++
		default:
			return
		}
	}
}

func (lx *lexer) ident() {
	for lx.pos < len(lx.src) && isIdentPart(lx.src[lx.pos]) {
		lx.pos++
	}
}

// regex consumes /…/flags, honouring escapes and character classes.
func (lx *lexer) regex() {
	lx.pos++
	inClass := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
			continue
		case c == '\n':
			return
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			lx.pos++
			lx.ident()
			return
		}
		lx.pos++
	}
	lx.pos = min(lx.pos, len(lx.src))
}

// jsxName consumes a tag or attribute name: identifier characters plus
// '-', '.' and ':' (data-x, Foo.Bar, xlink:href).
func (lx *lexer) jsxName() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if !isIdentPart(c) && c != '-' && c != '.' && c != ':' {
			return
		}
		lx.pos++
	}
}

// jsxExpr lexes a {…} expression container inside JSX.
func (lx *lexer) jsxExpr() {
	lx.emit(tkPunct, lx.pos, lx.pos+1)
	lx.pos++
	lx.js(true)
	if lx.pos < len(lx.src) {
		lx.emit(tkPunct, lx.pos, lx.pos+1)
		lx.pos++
	}
}

// jsxElement lexes one element starting at '<': its opening tag, its
// children (recursively) and its closing tag.
func (lx *lexer) jsxElement() {
	if !lx.enter() {
		return
	}
	defer lx.leave()
	lx.pos++ // '<'
	lx.skipSpace()
	start := lx.pos
	lx.jsxName()
	lx.toks = append(lx.toks, token{kind: tkJSXOpen, text: string(lx.src[start:lx.pos]), pos: start - 1})
	if !lx.jsxAttributes() {
		return
	}
	lx.jsxChildren()
}

// jsxAttributes lexes up to the end of an opening tag and reports whether
// children follow (false for "/>" or the end of input).
func (lx *lexer) jsxAttributes() bool {
	for {
		lx.skipSpace()
		if lx.pos >= len(lx.src) {
			return false
		}
		start := lx.pos
		c := lx.src[lx.pos]
		switch {
		case c == '/' && lx.peek(1) == '>':
			lx.pos += 2
			lx.emit(tkJSXSelfClose, start, lx.pos)
			return false
		case c == '>':
			lx.pos++
			lx.emit(tkJSXEnd, start, lx.pos)
			return true
		case c == '{':
			lx.jsxExpr()
		case c == '"' || c == '\'':
			lx.pos++
			for lx.pos < len(lx.src) && lx.src[lx.pos] != c {
				lx.pos++
			}
			lx.pos = min(lx.pos+1, len(lx.src))
			lx.emit(tkJSXString, start, lx.pos)
		case isIdentStart(c):
			lx.jsxName()
			lx.emit(tkJSXAttr, start, lx.pos)
		case c == '=':
			lx.pos++
			lx.emit(tkPunct, start, lx.pos)
		default:
			lx.pos++ // junk inside a tag (a TS generic, a stray character)
		}
	}
}

// jsxChildren lexes children up to and including the closing tag.
func (lx *lexer) jsxChildren() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case '<':
			save := lx.pos
			lx.pos++
			lx.skipSpace()
			if lx.pos < len(lx.src) && lx.src[lx.pos] == '/' {
				lx.pos++
				lx.skipSpace()
				start := lx.pos
				lx.jsxName()
				name := string(lx.src[start:lx.pos])
				for lx.pos < len(lx.src) && lx.src[lx.pos] != '>' {
					lx.pos++
				}
				lx.pos = min(lx.pos+1, len(lx.src))
				lx.toks = append(lx.toks, token{kind: tkJSXClose, text: name, pos: save})
				return
			}
			lx.pos = save
			lx.jsxElement()
		case '{':
			lx.jsxExpr()
		default:
			start := lx.pos
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '<' && lx.src[lx.pos] != '{' {
				lx.pos++
			}
			if strings.TrimSpace(string(lx.src[start:lx.pos])) != "" {
				lx.emit(tkJSXText, start, lx.pos)
			}
		}
	}
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isIdentStart(c byte) bool { return isLetter(c) || c == '_' || c == '$' || c >= 0x80 }

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }
