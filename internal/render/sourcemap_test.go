package render

import (
	"strings"
	"testing"
)

func TestSourceMapLookup(t *testing.T) {
	// Generated line 0: col 0 → a.ts 0:0, col 4 → a.ts 1:2;
	// line 1 empty; line 2: col 2 → b.ts 9:4.
	m, err := ParseSourceMap([]byte(`{"version":3,"sources":["a.ts","b.ts"],"mappings":"AAAA,IACE;;ECgBE"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, col   int
		src         string
		sline, scol int
		ok          bool
	}{
		{0, 0, "a.ts", 0, 0, true},
		{0, 3, "a.ts", 0, 0, true},
		{0, 4, "a.ts", 1, 2, true},
		{0, 99, "a.ts", 1, 2, true},
		{1, 0, "", 0, 0, false},
		{2, 1, "", 0, 0, false},
		{2, 2, "b.ts", 17, 4, true},
		{3, 0, "", 0, 0, false},
	} {
		src, sl, sc, ok := m.Lookup(tc.line, tc.col)
		if src != tc.src || sl != tc.sline || sc != tc.scol || ok != tc.ok {
			t.Errorf("Lookup(%d, %d) = %q %d:%d %v, want %q %d:%d %v", tc.line, tc.col, src, sl, sc, ok, tc.src, tc.sline, tc.scol, tc.ok)
		}
	}
}

func TestSourceMapErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"version":2,"sources":[],"mappings":""}`, "version 2, want 3"},
		{`{"version":3,"sources":["a"],"mappings":"AA"}`, "line 1 segment 1: 2 fields"},
		{`{"version":3,"sources":["a"],"mappings":"AAAA;AA!A"}`, `line 2 segment 1: '!' is not a base64 digit`},
		{`{"version":3,"sources":["a"],"mappings":"ACAA"}`, "line 1 segment 1: position out of range"},
		{`{"version":3,"sources":["a"],"mappings":"g"}`, "a value ends unfinished"},
		{`{"version":3`, "source map: unexpected end"},
	} {
		_, err := ParseSourceMap([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSourceMap(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseSourceMap(f *testing.F) {
	for _, s := range []string{
		`{"version":3,"sources":["a.ts","b.ts"],"mappings":"AAAA,IACE;;ECgBE"}`,
		`{"version":3,"sources":["a"],"mappings":"AAAAA,CAAC;gBAAgB"}`,
		`{"version":3,"sources":[],"mappings":";;;"}`,
		`{"version":3,"sources":["a"],"mappings":"//////"}`,
	} {
		f.Add([]byte(s), 0, 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, line, col int) {
		m, err := ParseSourceMap(data)
		if err != nil {
			return
		}
		src, sl, sc, ok := m.Lookup(line, col)
		if ok && (sl < 0 || sc < 0 || src != m.Sources[indexOf(m.Sources, src)]) {
			t.Fatalf("Lookup(%d, %d) = %q %d:%d", line, col, src, sl, sc)
		}
	})
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
