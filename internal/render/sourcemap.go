package render

import (
	"encoding/json"
	"fmt"
	"sort"
)

// SourceMap is a decoded source map (revision 3, as esbuild writes it):
// for a position in the generated file, the source file and position it
// came from.
//
// The mappings grammar: lines separated by ';', segments by ','; a
// segment is 1, 4 or 5 base64 VLQ fields — generated column, source
// index, source line, source column, name index — each relative to the
// same field of the segment before (the generated column only within a
// line).
type SourceMap struct {
	// Sources are the source files as the map names them.
	Sources []string
	lines   [][]segment // per generated line, by generated column
}

type segment struct {
	genCol, src, line, col int
}

// ParseSourceMap decodes a source map; the error says which line and
// segment of the mappings is malformed.
func ParseSourceMap(data []byte) (*SourceMap, error) {
	var raw struct {
		Version  int      `json:"version"`
		Sources  []string `json:"sources"`
		Mappings string   `json:"mappings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	if raw.Version != 3 {
		return nil, fmt.Errorf("source map: version %d, want 3", raw.Version)
	}
	m := &SourceMap{Sources: raw.Sources}
	var src, line, col int
	var cur []segment
	genCol, lineNo, segNo := 0, 1, 1
	s := raw.Mappings
	for i := 0; i <= len(s); {
		if i == len(s) || s[i] == ';' {
			m.lines = append(m.lines, cur)
			cur, genCol = nil, 0
			lineNo, segNo = lineNo+1, 1
			i++
			continue
		}
		if s[i] == ',' {
			segNo++
			i++
			continue
		}
		var fields [5]int
		n := 0
		for i < len(s) && s[i] != ',' && s[i] != ';' {
			if n == len(fields) {
				return nil, fmt.Errorf("source map: mappings line %d segment %d: more than 5 fields", lineNo, segNo)
			}
			v, next, err := vlq(s, i)
			if err != nil {
				return nil, fmt.Errorf("source map: mappings line %d segment %d: %w", lineNo, segNo, err)
			}
			fields[n], i = v, next
			n++
		}
		if n != 1 && n != 4 && n != 5 {
			return nil, fmt.Errorf("source map: mappings line %d segment %d: %d fields, want 1, 4 or 5", lineNo, segNo, n)
		}
		genCol += fields[0]
		if n == 1 {
			continue
		}
		src, line, col = src+fields[1], line+fields[2], col+fields[3]
		if src < 0 || src >= len(raw.Sources) || line < 0 || col < 0 || genCol < 0 {
			return nil, fmt.Errorf("source map: mappings line %d segment %d: position out of range", lineNo, segNo)
		}
		cur = append(cur, segment{genCol: genCol, src: src, line: line, col: col})
	}
	for _, l := range m.lines {
		sort.SliceStable(l, func(a, b int) bool { return l[a].genCol < l[b].genCol })
	}
	return m, nil
}

// Lookup returns the source position of a generated position; all
// positions are 0-based. ok is false when nothing maps there.
func (m *SourceMap) Lookup(line, col int) (source string, srcLine, srcCol int, ok bool) {
	if m == nil || line < 0 || line >= len(m.lines) {
		return "", 0, 0, false
	}
	segs := m.lines[line]
	i := sort.Search(len(segs), func(i int) bool { return segs[i].genCol > col }) - 1
	if i < 0 {
		return "", 0, 0, false
	}
	sg := segs[i]
	return m.Sources[sg.src], sg.line, sg.col, true
}

// vlq decodes one base64 VLQ value of s starting at i and returns it and
// the index after it.
func vlq(s string, i int) (int, int, error) {
	v, shift := 0, 0
	for {
		if i >= len(s) {
			return 0, i, fmt.Errorf("a value ends unfinished")
		}
		d := base64Value(s[i])
		if d < 0 {
			return 0, i, fmt.Errorf("%q is not a base64 digit", s[i])
		}
		i++
		if shift > 30 {
			return 0, i, fmt.Errorf("a value is too large")
		}
		v |= (d & 31) << shift
		shift += 5
		if d&32 == 0 {
			break
		}
	}
	if v&1 == 1 {
		return -(v >> 1), i, nil
	}
	return v >> 1, i, nil
}

func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
