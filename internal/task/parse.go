package task

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is a task.md that does not follow the format, with the
// 1-based line where reading stopped.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Parse reads a task.md written by Format, the Option B template, or a
// hand-edited file in the same layout. Errors are *SyntaxError values
// naming the offending line.
func Parse(src []byte) (Task, error) {
	p := parser{lines: splitLines(string(src))}
	return p.parse()
}

// splitLines splits a file into lines without their "\n", dropping the
// empty string after a final newline and a leading byte order mark. In a
// file whose first line ends in CRLF, one "\r" is dropped from every line.
func splitLines(s string) []string {
	s = strings.TrimPrefix(s, "\uFEFF")
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if strings.HasSuffix(lines[0], "\r") {
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	return lines
}

// parser holds the state of one Parse.
type parser struct {
	lines []string
	n     int // 1-based number of the current line
	t     Task

	seen    map[string]int // header or section name → line first seen
	section string         // current section; "" in the header block
	quoted  []string       // lines of the current quoted section
	gap     bool           // a blank line followed the quoted lines
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Line: p.n, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse() (Task, error) {
	p.seen = map[string]int{}
	titleLine := 0
	for i, raw := range p.lines {
		p.n = i + 1
		// Quoted lines keep a trailing "\r": the format escapes it
		// everywhere else, so there it can only be a line ending.
		line := strings.TrimSuffix(raw, "\r")
		blank := strings.TrimSpace(line) == ""

		if titleLine == 0 {
			if blank {
				continue
			}
			if err := p.title(line); err != nil {
				return Task{}, err
			}
			titleLine = p.n
			continue
		}
		if strings.HasPrefix(line, "#") {
			if err := p.heading(line); err != nil {
				return Task{}, err
			}
			continue
		}

		var err error
		switch p.section {
		case "":
			if !blank {
				err = p.header(line)
			}
		case sectionRequirements:
			if !blank {
				err = p.requirement(line)
			}
		case sectionScope:
			if !blank {
				err = p.scope(line)
			}
		case sectionQuestion, sectionOriginal:
			err = p.quote(raw, blank)
		}
		if err != nil {
			return Task{}, err
		}
	}
	p.endSection()

	if titleLine == 0 {
		p.n = max(len(p.lines), 1)
		return Task{}, p.errorf(`missing "# Task" heading`)
	}
	if _, ok := p.seen["Type"]; !ok {
		p.n = titleLine
		return Task{}, p.errorf(`missing "Type:" header`)
	}
	return p.t, nil
}

// title reads the "# Task: …" line.
func (p *parser) title(line string) error {
	rest, ok := strings.CutPrefix(line, "# Task")
	if !ok || (rest != "" && rest[0] != ':') {
		return p.errorf(`expected "# Task" heading, found %q`, line)
	}
	if rest != "" {
		p.t.Title = unescape(value(rest[1:]))
	}
	return nil
}

// header reads a "Key: value" line of the header block.
func (p *parser) header(line string) error {
	key, val, ok := strings.Cut(line, ":")
	if !ok {
		return p.errorf(`expected a "Type:", "Previous:" or "Counter:" header or a "## " section, found %q`, line)
	}
	if err := p.once(key); err != nil {
		return err
	}
	switch key {
	case "Type":
		return p.typ(strings.TrimSpace(val))
	case "Previous":
		p.t.Previous = unescape(value(val))
	case "Counter":
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return p.errorf("counter %q is not an integer", strings.TrimSpace(val))
		}
		p.t.Counter = n
	default:
		return p.errorf("unknown header %q", key)
	}
	return nil
}

// typ reads the value of the Type header: a type, optionally followed by
// the local classifier's guess as "(likely TYPE)".
func (p *parser) typ(val string) error {
	word, guess, hasGuess := strings.Cut(val, " ")
	t := Type(word)
	if !t.Valid() {
		return p.errorf("unknown task type %q (want one of %s)", word, joinTypes(Types()))
	}
	p.t.Type = t
	if !hasGuess {
		return nil
	}
	inner, ok := strings.CutPrefix(strings.TrimSpace(guess), "(likely ")
	inner, ok2 := strings.CutSuffix(inner, ")")
	if !ok || !ok2 {
		return p.errorf("expected %q or %q, found %q", word, word+" (likely TYPE)", val)
	}
	likely := Type(strings.TrimSpace(inner))
	if !likely.Valid() {
		return p.errorf("unknown likely task type %q (want one of %s)", likely, joinTypes(Types()))
	}
	p.t.Likely = likely
	return nil
}

// heading starts a new section at a "## Name (note)" line.
func (p *parser) heading(line string) error {
	name, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return p.errorf(`unexpected heading %q (sections start with "## ")`, line)
	}
	name = strings.TrimSpace(name)
	if i := strings.Index(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
		name = strings.TrimSpace(name[:i])
	}
	var section string
	for _, s := range []string{sectionRequirements, sectionScope, sectionQuestion, sectionOriginal, sectionRaw} {
		if strings.EqualFold(name, s) {
			section = s
		}
	}
	if section == "" {
		return p.errorf("unknown section %q (want %s, %s, %s or %s)", name,
			sectionRequirements, sectionScope, sectionQuestion, sectionOriginal)
	}
	if section == sectionRaw {
		section = sectionOriginal
	}
	if err := p.once("## " + section); err != nil {
		return err
	}
	p.endSection()
	p.section = section
	return nil
}

// once records a header or section and fails if it was seen before.
func (p *parser) once(name string) error {
	if first, ok := p.seen[name]; ok {
		return p.errorf("duplicate %q (first on line %d)", name, first)
	}
	p.seen[name] = p.n
	return nil
}

// requirement reads a "- [MARKER] text" line.
func (p *parser) requirement(line string) error {
	rest, ok := strings.CutPrefix(line, "- [")
	marker, text, ok2 := strings.Cut(rest, "]")
	if !ok || !ok2 {
		return p.errorf(`expected a requirement "- [ADD|MODIFY|FIX|REMOVE| ] text", found %q`, line)
	}
	var kind Kind
	switch m := strings.ToUpper(marker); m {
	case "", " ":
		kind = Open
	case string(Add), string(Modify), string(Fix), string(Remove):
		kind = Kind(m)
	default:
		return p.errorf("unknown requirement marker [%s] (want ADD, MODIFY, FIX, REMOVE or a blank checkbox)", marker)
	}
	if text != "" && text[0] != ' ' {
		return p.errorf("expected a space after [%s]", marker)
	}
	text, check, err := splitCheck(unescape(value(text)))
	if err != nil {
		return p.errorf("requirement [%s]: %v", marker, err)
	}
	p.t.Requirements = append(p.t.Requirements, Requirement{Kind: kind, Text: text, Check: check})
	return nil
}

// scope reads a "- PRESERVE: …" or "- AFFECTED FILES: …" line.
func (p *parser) scope(line string) error {
	if rest, ok := strings.CutPrefix(line, preservePrefix); ok {
		p.t.Preserve = append(p.t.Preserve, unescape(value(rest)))
		return nil
	}
	if rest, ok := strings.CutPrefix(line, affectedPrefix); ok {
		p.t.AffectedFiles = append(p.t.AffectedFiles, splitFiles(value(rest))...)
		return nil
	}
	return p.errorf("expected %q or %q, found %q", preservePrefix+" …", affectedPrefix+" …", line)
}

// quote collects a line of a quoted section.
func (p *parser) quote(raw string, blank bool) error {
	if blank {
		p.gap = len(p.quoted) > 0
		return nil
	}
	rest, ok := strings.CutPrefix(raw, ">")
	if !ok {
		return p.errorf(`expected a quoted line starting with ">", found %q`, raw)
	}
	if p.gap {
		return p.errorf("blank line inside quoted text (quote an empty line as \">\")")
	}
	p.quoted = append(p.quoted, strings.TrimPrefix(rest, " "))
	return nil
}

// endSection stores the text of a finished quoted section.
func (p *parser) endSection() {
	text := strings.Join(p.quoted, "\n")
	switch p.section {
	case sectionQuestion:
		p.t.Question = text
	case sectionOriginal:
		p.t.Original = text
	}
	p.quoted, p.gap = nil, false
}

// value drops the one space that separates a value from its key.
func value(s string) string {
	return strings.TrimPrefix(s, " ")
}

func joinTypes(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
