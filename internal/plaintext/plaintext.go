// Package plaintext turns what programs print for a terminal into text
// that is safe to show anywhere: terminal escape sequences (colours,
// cursor moves, titles) and other control characters removed, so that a
// task message or an agent's output can neither repaint a person's
// terminal nor clutter a page.
package plaintext

import (
	"regexp"
	"strings"
)

// ansi matches terminal escape sequences: CSI (colours, cursor moves),
// OSC (titles, links) and the two-character escapes.
var ansi = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

// Of returns s as text: terminal escapes removed, and other control
// characters but tab and newline with them; CRLF becomes LF.
func Of(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	s = ansi.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, strings.ReplaceAll(s, "\r\n", "\n"))
}

func isControl(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f }
