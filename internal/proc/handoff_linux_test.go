package proc

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHandoffRoundTrip(t *testing.T) {
	for _, p := range []program{
		// An empty environment stays empty, not nil, which would
		// stand for the supervisor's own.
		{Path: "/bin/sh", Dir: "/", Argv: []string{"sh"}, Env: []string{}},
		{Path: "./x", Dir: "/tmp/a b", Argv: []string{"x", "", "a=b", "ünï"}, Env: []string{"A=1", "", "PWD=/tmp/a b"}, Ruleset: true},
	} {
		msg, err := encodeProgram(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(msg) {
			if complete, err := framed(msg[:i]); err != nil || complete {
				t.Fatalf("framed(first %d of %d bytes) = %v, %v", i, len(msg), complete, err)
			}
		}
		got, err := decodeProgram(msg)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestHandoffRejects(t *testing.T) {
	if _, err := encodeProgram(program{Path: "/bin/sh", Dir: "/", Argv: []string{"a\x00b"}}); err == nil {
		t.Error("an argument holding a NUL was encoded")
	}
	frame := func(body string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	for _, tc := range []struct {
		msg  []byte
		want string
	}{
		{frame(""), "not terminated"},
		{frame("ralph-program-1\x00-\x00/bin/sh\x00/\x001\x00"), "fields"},
		{frame("other\x00-\x00/bin/sh\x00/\x001\x00sh\x00"), "field 1"},
		{frame("ralph-program-1\x00x\x00/bin/sh\x00/\x001\x00sh\x00"), "field 2"},
		{frame("ralph-program-1\x00-\x00\x00/\x001\x00sh\x00"), "field 3"},
		{frame("ralph-program-1\x00-\x00/bin/sh\x00rel\x001\x00sh\x00"), "field 4"},
		{frame("ralph-program-1\x00-\x00/bin/sh\x00/\x002\x00sh\x00"), "field 5"},
		{frame("ralph-program-1\x00-\x00/bin/sh\x00/\x000\x00sh\x00"), "field 5"},
		{append(frame("ralph-program-1\x00-\x00/bin/sh\x00/\x001\x00sh\x00"), 0), "bytes after"},
		{binary.BigEndian.AppendUint32(nil, maxHandoff+1), "over the limit"},
	} {
		_, err := decodeProgram(tc.msg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decode %q: %v, want an error about %q", tc.msg, err, tc.want)
		}
	}
}

func FuzzDecodeProgram(f *testing.F) {
	msg, _ := encodeProgram(program{Path: "/bin/sh", Dir: "/tmp", Argv: []string{"sh", "-c", "true"}, Env: []string{"A=1"}, Ruleset: true})
	f.Add(msg)
	f.Add([]byte{0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeProgram(data)
		if err != nil {
			return
		}
		if len(p.Argv) == 0 || p.Path == "" || p.Dir == "" || p.Dir[0] != '/' {
			t.Fatalf("decoded an invalid program %+v", p)
		}
		again, err := encodeProgram(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(data) {
			t.Fatalf("re-encoding differs:\n%q\n%q", again, data)
		}
	})
}
