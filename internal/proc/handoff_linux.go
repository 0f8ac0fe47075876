package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// The message that hands a program to the persistent supervisor:
//
//	length  uint32, big-endian: the length of what follows
//	fields  NUL-terminated strings:
//	        magic     "ralph-program-1"
//	        ruleset   "r" when a ruleset descriptor follows the streams, "-" when not
//	        path      the program to execute
//	        dir       its working directory, absolute
//	        n         the number of arguments, decimal, at least 1
//	        argv      n arguments, argv[0] first
//	        env       the rest: its environment, KEY=VALUE
//
// The descriptors travel with it (SCM_RIGHTS): standard input, output and
// error, then the ruleset. No string may hold a NUL, which execve could
// not pass either.

const handoffMagic = "ralph-program-1"

// maxHandoff bounds a message: far above what execve accepts.
const maxHandoff = 64 << 20

// program is what the supervisor is handed to run.
type program struct {
	Path, Dir string
	Argv, Env []string
	// Ruleset is true when a Landlock ruleset comes with the streams.
	Ruleset bool
}

// encodeProgram makes p's message. It fails for a string holding a NUL.
func encodeProgram(p program) ([]byte, error) {
	flag := "-"
	if p.Ruleset {
		flag = "r"
	}
	fields := append([]string{handoffMagic, flag, p.Path, p.Dir, strconv.Itoa(len(p.Argv))}, p.Argv...)
	fields = append(fields, p.Env...)
	size := 0
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, errors.New("handoff: a string holds a NUL byte")
		}
		size += len(f) + 1
	}
	if size > maxHandoff {
		return nil, errors.New("handoff: too large")
	}
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, 4+size), uint32(size))
	for _, f := range fields {
		buf = append(append(buf, f...), 0)
	}
	return buf, nil
}

// framed reports whether buf holds a whole message (and nothing more), so
// far as its length says; an error when it cannot be one.
func framed(buf []byte) (bool, error) {
	if len(buf) < 4 {
		return false, nil
	}
	n := binary.BigEndian.Uint32(buf)
	switch {
	case n > maxHandoff:
		return false, fmt.Errorf("handoff: length %d over the limit", n)
	case uint64(len(buf)-4) > uint64(n):
		return false, fmt.Errorf("handoff: %d bytes after a message of %d", len(buf)-4-int(n), n)
	}
	return uint64(len(buf)-4) == uint64(n), nil
}

// decodeProgram reads a whole message.
func decodeProgram(buf []byte) (program, error) {
	complete, err := framed(buf)
	if err != nil {
		return program{}, err
	}
	if !complete {
		return program{}, errors.New("handoff: message cut short")
	}
	body := buf[4:]
	if len(body) == 0 || body[len(body)-1] != 0 {
		return program{}, errors.New("handoff: the last field is not terminated")
	}
	fields := strings.Split(string(body[:len(body)-1]), "\x00")
	if len(fields) < 6 {
		return program{}, fmt.Errorf("handoff: %d fields, want at least 6", len(fields))
	}
	if fields[0] != handoffMagic {
		return program{}, fmt.Errorf("handoff: field 1 is %.40q, want %q", fields[0], handoffMagic)
	}
	p := program{Path: fields[2], Dir: fields[3]}
	switch fields[1] {
	case "r":
		p.Ruleset = true
	case "-":
	default:
		return program{}, fmt.Errorf("handoff: field 2 (ruleset) is %.40q, want r or -", fields[1])
	}
	if p.Path == "" {
		return program{}, errors.New("handoff: field 3 (path) is empty")
	}
	if !filepath.IsAbs(p.Dir) {
		return program{}, fmt.Errorf("handoff: field 4 (dir) %.40q is not absolute", p.Dir)
	}
	n, err := strconv.Atoi(fields[4])
	if err != nil || n < 1 || n > len(fields)-5 || strconv.Itoa(n) != fields[4] {
		return program{}, fmt.Errorf("handoff: field 5 (arguments) is %.40q, want 1 to %d", fields[4], len(fields)-5)
	}
	p.Argv = fields[5 : 5+n]
	// Never nil: an empty environment stays empty.
	p.Env = fields[5+n:]
	return p, nil
}
