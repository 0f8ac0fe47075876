package task

import (
	"bytes"
	"strconv"
	"strings"
)

// Section names and the notes Format adds to guide the agent on a pending
// task.
const (
	sectionRequirements = "Requirements"
	sectionScope        = "Scope"
	sectionQuestion     = "Question"
	sectionOriginal     = "Original Message"
	sectionRaw          = "Raw Message" // the seed's Option B name, read as Original Message

	noteRequirements = "fill these in during planning"
	noteScope        = "declare what is preserved"
)

// Scope item prefixes.
const (
	preservePrefix = "- PRESERVE:"
	affectedPrefix = "- AFFECTED FILES:"
)

// Format writes t as task.md in the layout described in the package
// documentation. Format does not check t; a Task that fails Validate is
// written as given and Parse will reject it.
func Format(t Task) []byte {
	var b bytes.Buffer

	b.WriteString("# Task")
	if t.Title != "" {
		b.WriteString(": ")
		b.WriteString(escape(t.Title, false))
	}
	b.WriteString("\nType: ")
	b.WriteString(string(t.Type))
	if t.Likely != "" {
		b.WriteString(" (likely ")
		b.WriteString(string(t.Likely))
		b.WriteString(")")
	}
	b.WriteString("\nPrevious: ")
	b.WriteString(escape(t.Previous, false))
	b.WriteString("\nCounter: ")
	b.WriteString(strconv.Itoa(t.Counter))
	b.WriteString("\n")

	pending := t.Type == Pending
	heading(&b, sectionRequirements, pending, noteRequirements)
	for _, r := range t.Requirements {
		b.WriteString("- [")
		b.WriteString(r.Kind.marker())
		b.WriteString("]")
		v := r.Text
		if r.Check != nil {
			v += CheckSep + formatCheck(r.Check)
		}
		if v != "" {
			b.WriteString(" ")
			b.WriteString(escape(v, false))
		}
		b.WriteString("\n")
	}

	heading(&b, sectionScope, pending, noteScope)
	for _, p := range t.Preserve {
		item(&b, preservePrefix, escape(p, false))
	}
	if len(t.AffectedFiles) > 0 {
		files := make([]string, len(t.AffectedFiles))
		for i, f := range t.AffectedFiles {
			files[i] = escape(f, true)
		}
		item(&b, affectedPrefix, strings.Join(files, ", "))
	}

	if t.Question != "" {
		heading(&b, sectionQuestion, false, "")
		quote(&b, t.Question)
	}

	heading(&b, sectionOriginal, false, "")
	quote(&b, t.Original)
	return b.Bytes()
}

// heading writes a blank line and a section heading, with its note when
// withNote is set.
func heading(b *bytes.Buffer, name string, withNote bool, note string) {
	b.WriteString("\n## ")
	b.WriteString(name)
	if withNote && note != "" {
		b.WriteString(" (")
		b.WriteString(note)
		b.WriteString(")")
	}
	b.WriteString("\n")
}

// item writes a scope line: the prefix, then a space and the value unless
// the value is empty.
func item(b *bytes.Buffer, prefix, value string) {
	b.WriteString(prefix)
	if value != "" {
		b.WriteString(" ")
		b.WriteString(value)
	}
	b.WriteString("\n")
}

// quote writes text verbatim, one "> " line per line of text; an empty line
// is written as ">" and empty text as nothing at all.
func quote(b *bytes.Buffer, text string) {
	if text == "" {
		return
	}
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString(">")
		if line != "" {
			b.WriteString(" ")
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
}

// escape makes s a one-line value: backslash, newline and carriage return
// become \\, \n and \r, and with comma set a comma becomes \,.
func escape(s string, comma bool) string {
	if !strings.ContainsAny(s, "\\\n\r,") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case ',':
			if comma {
				b.WriteString(`\,`)
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescape reverses escape. A backslash before any other byte, or at the
// end, stands for itself.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case ',':
			b.WriteByte(',')
		default:
			b.WriteByte(c)
			continue
		}
		i++
	}
	return b.String()
}

// splitFiles splits an escaped file list at unescaped commas, dropping one
// space after each comma, and unescapes the items.
func splitFiles(s string) []string {
	var files []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // skip the escaped byte
		case ',':
			files = append(files, unescape(s[start:i]))
			start = i + 1
			if start < len(s) && s[start] == ' ' {
				start++
				i++
			}
		}
	}
	return append(files, unescape(s[start:]))
}
