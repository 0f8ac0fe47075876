package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MarkerKind is the kind of change a marker asks for.
type MarkerKind uint8

// The marker kinds of SPEC §9.
const (
	Add       MarkerKind = iota + 1 // TASK-N [ADD]: …
	Modify                          // TASK-N [MODIFY]: …
	Fix                             // TASK-N [FIX]: …
	Remove                          // TASK-N [REMOVE]: …
	NoChanges                       // NO CHANGES for task-N
	Preserved                       // … PRESERVED …
)

// String returns the marker kind as written in a plan: ADD, MODIFY, FIX,
// REMOVE, NO CHANGES, PRESERVED.
func (k MarkerKind) String() string {
	switch k {
	case Add:
		return "ADD"
	case Modify:
		return "MODIFY"
	case Fix:
		return "FIX"
	case Remove:
		return "REMOVE"
	case NoChanges:
		return "NO CHANGES"
	case Preserved:
		return "PRESERVED"
	}
	return fmt.Sprintf("MarkerKind(%d)", uint8(k))
}

// MarshalText writes the kind as String does.
func (k MarkerKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Marker is a change marker parsed from a JSX comment.
type Marker struct {
	Kind MarkerKind `json:"kind"`
	// Task is the task number N the marker names, 0 when it names none
	// (a PRESERVED marker often does not).
	Task int `json:"task,omitempty"`
	// Text is what the marker says: after the colon for TASK-N markers, the
	// whole comment for NO CHANGES and PRESERVED.
	Text string `json:"text"`
	// Count is the number of items the marker gives, 0 when it gives none:
	// "[ADD]: 2 nighttime drink flavors" → 2, "EXISTING 8 flavors
	// PRESERVED" → 8.
	Count int `json:"count,omitempty"`
	Line  int `json:"line"`
}

// String renders the marker as it is conventionally written.
func (m Marker) String() string {
	switch m.Kind {
	case Add, Modify, Fix, Remove:
		return fmt.Sprintf("TASK-%d [%s]: %s", m.Task, m.Kind, m.Text)
	}
	return m.Text
}

var (
	taskMarkerRE = regexp.MustCompile(`(?is)\btask[-_ ]?(\d+)\s*\[\s*(add|modify|fix|remove)\s*\]\s*:?\s*(.*)$`)
	noChangesRE  = regexp.MustCompile(`\bNO[ _-]CHANGES?\b`)
	preservedRE  = regexp.MustCompile(`\bPRESERVED\b`)
	taskNumberRE = regexp.MustCompile(`(?i)\btask[-_ ]?(\d+)\b`)
)

// ParseMarker parses one comment's text into a marker. A comment holds at
// most one marker; TASK-N [KIND] wins over NO CHANGES, which wins over
// PRESERVED. The keywords NO CHANGES and PRESERVED must be upper case, so
// that prose such as "styles preserved" is not a marker.
func ParseMarker(text string) (Marker, bool) {
	if !strings.Contains(text, "[") && !strings.Contains(text, "NO") && !strings.Contains(text, "PRESERVED") {
		return Marker{}, false // no marker can match: skip the regexps
	}
	if m := taskMarkerRE.FindStringSubmatch(text); m != nil {
		task, _ := strconv.Atoi(m[1])
		mk := Marker{Task: task, Text: strings.TrimSpace(m[3])}
		switch strings.ToUpper(m[2]) {
		case "ADD":
			mk.Kind = Add
		case "MODIFY":
			mk.Kind = Modify
		case "FIX":
			mk.Kind = Fix
		default:
			mk.Kind = Remove
		}
		mk.Count = leadingCount(mk.Text)
		return mk, true
	}
	var kind MarkerKind
	switch {
	case noChangesRE.MatchString(text):
		kind = NoChanges
	case preservedRE.MatchString(text):
		kind = Preserved
	default:
		return Marker{}, false
	}
	mk := Marker{Kind: kind, Text: strings.TrimSpace(text)}
	if m := taskNumberRE.FindStringSubmatch(text); m != nil {
		mk.Task, _ = strconv.Atoi(m[1])
	}
	if kind == Preserved {
		mk.Count = firstCount(taskNumberRE.ReplaceAllString(text, ""))
	}
	return mk, true
}

// parseMarkers returns the markers among comments, in order.
func parseMarkers(comments []Comment) []Marker {
	var out []Marker
	for _, c := range comments {
		if m, ok := ParseMarker(c.Text); ok {
			m.Line = c.Line
			out = append(out, m)
		}
	}
	return out
}

// leadingCount reads a count at the start of text, after an optional verb
// or "new": "2 flavors", "add two new plans" → 2.
func leadingCount(text string) int {
	words := strings.Fields(strings.ToLower(text))
	for i, w := range words {
		if i >= 3 {
			break
		}
		if n := countWord(w); n > 0 {
			return n
		}
		switch strings.Trim(w, ",.:;") {
		case "add", "adds", "adding", "remove", "removes", "removing", "drop", "new", "another", "extra", "more":
			continue
		}
		break
	}
	return 0
}

// firstCount reads the first count anywhere in text.
func firstCount(text string) int {
	for _, w := range strings.Fields(strings.ToLower(text)) {
		if n := countWord(w); n > 0 {
			return n
		}
	}
	return 0
}

// countWord reads a word as a positive count: "8", "8x", "two".
func countWord(w string) int {
	w = strings.Trim(w, ",.:;()[]")
	if n, err := strconv.Atoi(w); err == nil && n > 0 && n < 1_000_000 {
		return n
	}
	words := [...]string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	for i, nw := range words {
		if w == nw {
			return i + 1
		}
	}
	return 0
}
