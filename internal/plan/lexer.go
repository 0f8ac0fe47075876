package plan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pos is a place in the source.
type pos struct{ line, col int }

// scanner reads the tokens of a plan. JSX lexing depends on where the
// parser is (a tag, a prop value, element children), so the parser asks the
// scanner for the token it expects next rather than reading a token stream.
// Every method either consumes input or reports that it found nothing, so
// the parser always makes progress.
type scanner struct {
	file string
	src  []byte
	off  int
	line int
	col  int
	// names interns component and prop names, which repeat a lot.
	names map[string]string
}

// intern returns b as a string, sharing one copy per distinct name.
func (s *scanner) intern(b []byte) string {
	if v, ok := s.names[string(b)]; ok {
		return v
	}
	if s.names == nil {
		s.names = make(map[string]string)
	}
	v := string(b)
	s.names[v] = v
	return v
}

func newScanner(file string, src []byte) *scanner {
	return &scanner{file: file, src: src, line: 1, col: 1}
}

func (s *scanner) eof() bool { return s.off >= len(s.src) }

// peek returns the current byte, 0 at end of input.
func (s *scanner) peek() byte {
	if s.off >= len(s.src) {
		return 0
	}
	return s.src[s.off]
}

// peekAt returns the byte i past the current one, 0 past the end.
func (s *scanner) peekAt(i int) byte {
	if s.off+i >= len(s.src) {
		return 0
	}
	return s.src[s.off+i]
}

func (s *scanner) hasPrefix(p string) bool {
	if len(s.src)-s.off < len(p) {
		return false
	}
	for i := range len(p) {
		if s.src[s.off+i] != p[i] {
			return false
		}
	}
	return true
}

// next consumes one byte, keeping line and column (in code points).
func (s *scanner) next() {
	if s.off >= len(s.src) {
		return
	}
	c := s.src[s.off]
	s.off++
	switch {
	case c == '\n':
		s.line++
		s.col = 1
	case c&0xC0 != 0x80: // not a UTF-8 continuation byte
		s.col++
	}
}

func (s *scanner) skip(n int) {
	for range n {
		s.next()
	}
}

func (s *scanner) pos() pos { return pos{s.line, s.col} }

func (s *scanner) errAt(p pos, format string, args ...any) *SyntaxError {
	return &SyntaxError{File: s.file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) errorf(format string, args ...any) *SyntaxError {
	return s.errAt(s.pos(), format, args...)
}

// found describes the input at the current position for "found X" in
// error messages.
func (s *scanner) found() string {
	if s.eof() {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(s.src[s.off:])
	switch r {
	case '\n':
		return "end of line"
	case utf8.RuneError:
		return "an invalid byte"
	}
	if isIdentStart(s.peek()) {
		end := s.off
		for end < len(s.src) && isIdentPart(s.src[end]) && end-s.off < 40 {
			end++
		}
		return strconv.Quote(string(s.src[s.off:end]))
	}
	return strconv.QuoteRune(r)
}

// checkUTF8 reports the position of the first invalid UTF-8 byte.
func (s *scanner) checkUTF8() error {
	if utf8.Valid(s.src) {
		return nil
	}
	for !s.eof() {
		r, size := utf8.DecodeRune(s.src[s.off:])
		if r == utf8.RuneError && size == 1 {
			return s.errorf("invalid UTF-8 encoding (byte 0x%02x); save plan.tsx as UTF-8", s.peek())
		}
		s.skip(size)
	}
	return nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool { return isLetter(c) || c == '_' || c == '$' }

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

func (s *scanner) skipSpace() {
	for !s.eof() && isSpace(s.peek()) {
		s.next()
	}
}

// skipSpaceAndComments skips space, // comments and /* comments */,
// returning the comments it passed.
func (s *scanner) skipSpaceAndComments() ([]Comment, error) {
	var out []Comment
	for {
		s.skipSpace()
		switch {
		case s.hasPrefix("//"):
			out = append(out, s.lineComment())
		case s.hasPrefix("/*"):
			c, err := s.blockComment()
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		default:
			return out, nil
		}
	}
}

// lineComment reads a // comment up to the end of the line.
func (s *scanner) lineComment() Comment {
	p := s.pos()
	s.skip(2)
	start := s.off
	for !s.eof() && s.peek() != '\n' {
		s.next()
	}
	return Comment{Text: strings.TrimSpace(string(s.src[start:s.off])), Line: p.line, Col: p.col}
}

// blockComment reads a /* comment */.
func (s *scanner) blockComment() (Comment, error) {
	p := s.pos()
	s.skip(2)
	start := s.off
	end := bytes.Index(s.src[s.off:], []byte("*/"))
	if end < 0 {
		return Comment{}, s.errAt(p, "unterminated comment: expected */ to close the /* opened here")
	}
	for s.off < start+end {
		s.next()
	}
	s.skip(2)
	return Comment{Text: strings.TrimSpace(string(s.src[start : start+end])), Line: p.line, Col: p.col}, nil
}

// ident reads an identifier, returning "" if there is none here.
func (s *scanner) ident() string {
	if !isIdentStart(s.peek()) {
		return ""
	}
	start := s.off
	for !s.eof() && isIdentPart(s.peek()) {
		s.next()
	}
	return s.intern(s.src[start:s.off])
}

// propName reads a prop name: an identifier that may contain - and :
// (aria-label, xlink:href).
func (s *scanner) propName() string {
	if !isIdentStart(s.peek()) {
		return ""
	}
	start := s.off
	for !s.eof() {
		c := s.peek()
		if !isIdentPart(c) && c != '-' && c != ':' {
			break
		}
		s.next()
	}
	return s.intern(s.src[start:s.off])
}

// attrString reads a JSX attribute string, which has no escapes.
func (s *scanner) attrString() (string, error) {
	p := s.pos()
	q := s.peek()
	s.next()
	start := s.off
	for !s.eof() && s.peek() != q {
		s.next()
	}
	if s.eof() {
		return "", s.errAt(p, "unterminated string: expected %c to close the string opened here", q)
	}
	v := string(s.src[start:s.off])
	s.next()
	return v, nil
}

// jsString reads a JavaScript string literal in ', " or ` quotes.
func (s *scanner) jsString() (string, error) {
	p := s.pos()
	q := s.peek()
	s.next()
	var b strings.Builder
	for {
		if s.eof() {
			return "", s.errAt(p, "unterminated string: expected %c to close the string opened here", q)
		}
		c := s.peek()
		switch {
		case c == q:
			s.next()
			return b.String(), nil
		case c == '\n' && q != '`':
			return "", s.errAt(p, "unterminated string: expected %c before the end of the line (use `…` for text over several lines)", q)
		case c == '$' && q == '`' && s.peekAt(1) == '{':
			return "", s.errorf("template substitutions ${…} are not supported: a plan holds literal values only")
		case c == '\\':
			if err := s.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			s.next()
		}
	}
}

// escape reads one backslash escape into b.
func (s *scanner) escape(b *strings.Builder) error {
	p := s.pos()
	s.next()
	if s.eof() {
		return s.errAt(p, "unterminated escape at end of file")
	}
	c := s.peek()
	s.next()
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'v':
		b.WriteByte('\v')
	case '0':
		b.WriteByte(0)
	case '\n': // line continuation
	case 'u':
		var hex string
		if s.peek() == '{' {
			s.next()
			start := s.off
			for !s.eof() && s.peek() != '}' && s.off-start < 8 {
				s.next()
			}
			hex = string(s.src[start:s.off])
			if s.peek() != '}' {
				return s.errAt(p, "invalid escape: expected \\u{XXXX}")
			}
			s.next()
		} else {
			start := s.off
			for range 4 {
				s.next()
			}
			hex = string(s.src[start:s.off])
			if len(hex) != 4 {
				return s.errAt(p, "invalid escape: expected \\u followed by 4 hex digits")
			}
		}
		r, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || r > utf8.MaxRune {
			return s.errAt(p, "invalid escape: expected \\u followed by 4 hex digits")
		}
		b.WriteRune(rune(r))
	default:
		// \\, \', \", \` and any other character stand for themselves.
		b.WriteByte(c)
	}
	return nil
}

// number reads a decimal number, optionally negative.
func (s *scanner) number() (float64, error) {
	p := s.pos()
	start := s.off
	if s.peek() == '-' || s.peek() == '+' {
		s.next()
	}
	digits := 0
	for isDigit(s.peek()) {
		s.next()
		digits++
	}
	if s.peek() == '.' {
		s.next()
		for isDigit(s.peek()) {
			s.next()
			digits++
		}
	}
	if digits > 0 && (s.peek() == 'e' || s.peek() == 'E') {
		s.next()
		if s.peek() == '-' || s.peek() == '+' {
			s.next()
		}
		for isDigit(s.peek()) {
			s.next()
		}
	}
	text := string(s.src[start:s.off])
	if digits == 0 {
		return 0, s.errAt(p, "expected a number, found %s", s.found())
	}
	if isIdentStart(s.peek()) {
		return 0, s.errorf("expected a number, found %q followed by %s", text, s.found())
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, s.errAt(p, "number %s is out of range", text)
	}
	return f, nil
}

// text reads element text up to the next < or {.
// The result aliases the source.
func (s *scanner) text() []byte {
	start := s.off
	for !s.eof() && s.peek() != '<' && s.peek() != '{' {
		s.next()
	}
	return s.src[start:s.off]
}
