package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what /proc/PID/stat says about a process.
type procStat struct {
	PPID   int
	PGID   int
	Start  uint64
	Zombie bool
	// Kernel is a kernel thread: it has no environment and runs no
	// program.
	Kernel bool
}

// pfKthread is the kernel thread flag of /proc/PID/stat's flags field.
const pfKthread = 0x00200000

// readStat parses /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	var buf [statSize]byte
	data, ok := readProcFile(buf[:], "/proc/"+strconv.Itoa(pid)+"/stat")
	if !ok {
		return procStat{}, false
	}
	return parseStat(data)
}

// statSize holds any /proc/PID/stat line: 52 numeric fields of at most 20
// digits and a command name of at most 64 bytes.
const statSize = 2048

// readProcFile reads the small file path into buf with one open, reads
// and a close: ending a group's escapees may read the stat of every
// process on the machine (when the group did not run on the persistent
// supervisor), and os.ReadFile's stat and growing buffer cost a third of
// that. A file longer than buf reads as not there.
func readProcFile(buf []byte, path string) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			return buf[:n], true
		}
		n += m
	}
	return nil, false
}

// parseStat reads the state (field 3), process group (5), flags (9) and
// start time (22) of a /proc/PID/stat line. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses.
func parseStat(data []byte) (procStat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err0 := strconv.Atoi(f[1])
	pgid, err1 := strconv.Atoi(f[2])
	flags, err2 := strconv.ParseUint(f[6], 10, 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{PPID: ppid, PGID: pgid, Start: start, Zombie: f[0] == "Z" || f[0] == "X", Kernel: flags&pfKthread != 0}, true
}

// startTime returns pid's start time in clock ticks after boot.
func startTime(pid int) (uint64, bool) {
	st, ok := readStat(pid)
	return st.Start, ok
}

// Self returns this process's pid and start time, the identity under
// which it records the groups it starts.
func Self() (pid int, start uint64) {
	pid = os.Getpid()
	start, _ = startTime(pid)
	return pid, start
}

// pids lists the numeric entries of /proc.
func pids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// pipeHolders lists the processes that have one of files (pipe ends) open.
func pipeHolders(files ...*os.File) []Escapee {
	want := map[string]bool{}
	for _, f := range files {
		fi, err := f.Stat()
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			want[fmt.Sprintf("pipe:[%d]", st.Ino)] = true
		}
	}
	self := os.Getpid()
	var out []Escapee
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && want[link] {
				out = append(out, Escapee{PID: pid, Command: cmdline(pid)})
				break
			}
		}
	}
	return out
}

// cmdline returns pid's command line, shortened for a message.
func cmdline(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// environHas reports whether process pid's environment holds kv
// ("NAME=value"), and
// whether it could be read at all: it cannot be for a moment while the
// process execs (it reads as empty), nor for a process of another user.
func environHas(pid int, kv string) (has, read bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(data) == 0 {
		return false, false
	}
	for _, v := range bytes.Split(data, []byte{0}) {
		if string(v) == kv {
			return true, true
		}
	}
	return false, true
}

// procfs is the live process table, read from /proc.
type procfs struct{}

func (procfs) Stat(pid int) (start uint64, pgid int, alive bool) {
	st, ok := readStat(pid)
	if !ok || st.Zombie {
		return 0, 0, false
	}
	return st.Start, st.PGID, true
}

func (procfs) Members(pgid int) []int {
	var out []int
	for _, pid := range pids() {
		if st, ok := readStat(pid); ok && !st.Zombie && st.PGID == pgid {
			out = append(out, pid)
		}
	}
	return out
}

func (procfs) HasToken(pid int, token string) bool {
	if token == "" {
		return false
	}
	has, _ := environHas(pid, tokenEnv+"="+token)
	return has
}

func processes() ProcessTable { return procfs{} }

// descendants lists the processes below root that root took in: the
// children of its main thread (adopted), theirs, and so on, from
// /proc/PID/task/TID/children. root is a child subreaper (the persistent
// supervisor), ralph's child: a process whose parent ends while the walk
// runs moves to root, so root's list is read again at the end until it
// names no process not yet seen. ok is false, and the caller
// reads every process instead, when root is gone, a zombie or not
// ralph's child, when a list could not be read, or when root kept
// adopting processes for as long as the walk looked.
func descendants(root int) (out []int, ok bool) {
	seen := map[int]bool{}
	var queue []int
	add := func(pids []int) (added bool) {
		for _, p := range pids {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
				added = true
			}
		}
		return added
	}
	for round := 0; ; round++ {
		kids, ok := adopted(root)
		if !ok || round == maxRereads {
			return nil, false
		}
		if !add(kids) && round > 0 {
			break
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			out = append(out, p)
			k, ok := children(p)
			if !ok && exists(p) {
				return nil, false
			}
			add(k)
		}
	}
	if st, ok := readStat(root); !ok || st.Zombie || st.PPID != os.Getpid() {
		return nil, false
	}
	return out, true
}

// maxRereads bounds how often descendants reads its root's list.
const maxRereads = 10

// exists reports whether process pid has an entry in /proc.
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// children lists pid's children, those of each of its threads; ok is
// false when pid is gone or a thread's list could not be read (a kernel
// without CONFIG_PROC_CHILDREN has none). The kernel's list may skip a
// child when another one ends while it is read: the lists are read until
// two reads agree, maxRereads times at most.
func children(pid int) (out []int, ok bool) {
	return agreed(func() ([]int, bool) { return readChildren(pid) })
}

// adopted lists the children of the child subreaper pid's main thread,
// read as children reads them; ok is false when the list cannot be read.
// The kernel hands a process whose parent ends to the first thread of
// its subreaper that is not exiting: the main thread, while the process
// lives (a Go program's main thread never ends before it). So the list
// holds every process pid took in, without reading the lists of its
// other threads; a program pid started is in it once the thread that
// started it has ended.
func adopted(pid int) (out []int, ok bool) {
	list := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children"
	return agreed(func() ([]int, bool) {
		data, err := os.ReadFile(list)
		if err != nil {
			return nil, false
		}
		return parsePids(data), true
	})
}

// agreed calls read until two calls agree (a kernel's children list can
// skip a child when another ends while it is read), maxRereads times at
// most.
func agreed(read func() ([]int, bool)) (out []int, ok bool) {
	prev, ok := read()
	for i := 0; ok && i < maxRereads; i++ {
		next, ok := read()
		if !ok {
			return nil, false
		}
		if sameSet(prev, next) {
			return next, true
		}
		prev = next
	}
	return nil, false
}

// readChildren reads pid's children lists once.
func readChildren(pid int) (out []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	tids, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, false
	}
	for _, tid := range tids {
		data, err := os.ReadFile(dir + tid + "/children")
		if err != nil {
			// A thread that ended meanwhile has no list, nor children.
			if _, err := os.Stat(dir + tid); err == nil {
				return nil, false
			}
			continue
		}
		out = append(out, parsePids(data)...)
	}
	return out, true
}

// parsePids reads a children list: pids separated by spaces.
func parsePids(data []byte) []int {
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// sameSet reports whether a and b hold the same pids.
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[int]bool, len(a))
	for _, p := range a {
		in[p] = true
	}
	for _, p := range b {
		if !in[p] {
			return false
		}
	}
	return true
}
