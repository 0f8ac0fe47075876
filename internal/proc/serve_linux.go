package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The persistent supervisor's side (see persistent_linux.go for ralph's).

// server is the persistent supervisor's side: the groups it started that
// have not ended.
type server struct {
	// forking is held (shared) from a program's fork until it is live,
	// and alone by reap, so that reap never takes a program's end for an
	// adopted process's. A fork never waits on mu, so that an exec that
	// hangs (a program on a hung mount) holds up no end.
	forking sync.RWMutex
	mu      sync.Mutex
	live    map[int]bool
	ending  bool
	once    sync.Once
	// sweep wakes reap.
	sweep chan struct{}
}

// serve is the persistent supervisor's life: take connections on the
// control socket ctl and run the program of each, until ralph is gone.
func serve(parent, ctl int) int {
	syscall.CloseOnExec(ctl)
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	if os.Getppid() != parent {
		return 1
	}
	// What leaves a program's group and outlives its parent comes here
	// instead of to init, so that ralph finds it below the supervisor;
	// reap takes those that end, on each SIGCHLD and twice a second.
	// Ralph counts on it: a supervisor that cannot be one does not run,
	// and its programs are started the cold way.
	if unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != nil {
		return 1
	}
	s := &server{live: map[int]bool{}, sweep: make(chan struct{}, 1)}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		for range chld {
			s.wake()
		}
	}()
	go s.reap()
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		for {
			select {
			case <-sigs:
			case <-tick.C:
				s.wake()
			}
			if os.Getppid() != parent {
				s.end()
			}
		}
	}()
	buf := make([]byte, 16)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(ctl, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			s.end()
		}
		fds := unixRights(oob[:oobn])
		if len(fds) != 1 {
			closeAll(fds)
			continue
		}
		go s.run(fds[0])
	}
}

// unixRights returns the descriptors an SCM_RIGHTS message carried.
func unixRights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if rights, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, rights...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// run receives programs on conn, one after the other, starts each and
// reports its start and its end, until ralph closes conn (or a program
// does not start): ralph keeps a connection whose program ended for its
// next program, which then finds this goroutine waiting.
func (s *server) run(conn int) {
	defer syscall.Close(conn)
	for {
		p, fds, err := receiveProgram(conn)
		if err != nil {
			return
		}
		pid, err := s.start(p, fds)
		if err != nil {
			writeAll(conn, []byte{replyFailed})
			return
		}
		reply := make([]byte, 1, startedLen)
		start, _ := startTime(pid)
		reply = binary.BigEndian.AppendUint32(reply, uint32(pid))
		reply = binary.BigEndian.AppendUint64(reply, start)
		if writeAll(conn, reply) != nil {
			s.wait(pid)
			return
		}
		if writeAll(conn, binary.BigEndian.AppendUint32(nil, uint32(s.wait(pid)))) != nil {
			return
		}
	}
}

// start starts p in a new session and process group with the standard
// streams fds[0:3] and, when p.Ruleset, confined by the ruleset fds[3],
// and closes fds.
func (s *server) start(p program, fds []int) (int, error) {
	defer closeAll(fds[:3])
	attr := &syscall.ProcAttr{
		Dir:   p.Dir,
		Env:   p.Env,
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	var pid int
	var err error
	// The program is live before reap can see it as a child.
	s.forking.RLock()
	defer s.forking.RUnlock()
	if !p.Ruleset {
		pid, err = syscall.ForkExec(p.Path, p.Argv, attr)
	} else {
		// Landlock restricts the calling thread, and a child inherits
		// its forking thread's domain: restrict a thread of this
		// program's own and fork from it. It is never unlocked, so the
		// thread ends with the goroutine. No parent-death signal: it
		// would fire when this thread ends.
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			if err = restrictThread(fds[3]); err == nil {
				pid, err = syscall.ForkExec(p.Path, p.Argv, attr)
			}
		}()
		<-done
	}
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.live[pid] = true
	ending := s.ending
	s.mu.Unlock()
	if ending {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	return pid, nil
}

// wake makes reap look at the children.
func (s *server) wake() {
	select {
	case s.sweep <- struct{}{}:
	default:
	}
}

// reap reaps the children that are not programs the supervisor started:
// processes that left a program's group and came to the supervisor, the
// subreaper, when their parent ended.
func (s *server) reap() {
	self := os.Getpid()
	for range s.sweep {
		s.forking.Lock()
		kids, ok := adopted(self)
		if !ok {
			kids = childrenByStat(self)
		}
		s.mu.Lock()
		for _, pid := range kids {
			if !s.live[pid] {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			}
		}
		s.mu.Unlock()
		s.forking.Unlock()
	}
}

// childrenByStat lists pid's children from every process's stat: for a
// kernel that does not list children.
func childrenByStat(pid int) []int {
	var out []int
	for _, p := range pids() {
		if st, ok := readStat(p); ok && st.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}

// wait waits for the group leader pid to end, kills what is left of its
// group while the unreaped leader still holds the group's id, reaps it
// and returns its wait status.
func (s *server) wait(pid int) syscall.WaitStatus {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == syscall.EINTR {
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	// Reaped and no longer live at once: its pid may be a new program's
	// the moment it is reaped.
	s.mu.Lock()
	defer s.mu.Unlock()
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	delete(s.live, pid)
	return ws
}

// end ends every group the supervisor started, SIGTERM first and SIGKILL
// after reapGrace, and exits.
func (s *server) end() {
	s.once.Do(func() {
		s.mu.Lock()
		s.ending = true
		for pid := range s.live {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		}
		s.mu.Unlock()
		for deadline := time.Now().Add(reapGrace); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			s.mu.Lock()
			n := len(s.live)
			s.mu.Unlock()
			if n == 0 {
				break
			}
		}
		s.mu.Lock()
		for pid := range s.live {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		os.Exit(1)
	})
}

// receiveProgram reads one program and its descriptors from conn.
func receiveProgram(conn int) (program, []int, error) {
	var fds []int
	var buf []byte
	chunk := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	fail := func(err error) (program, []int, error) {
		closeAll(fds)
		return program{}, nil, err
	}
	for {
		n, oobn, _, _, err := syscall.Recvmsg(conn, chunk, oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		fds = append(fds, unixRights(oob[:oobn])...)
		if n == 0 {
			return fail(io.ErrUnexpectedEOF)
		}
		buf = append(buf, chunk[:n]...)
		if complete, err := framed(buf); err != nil {
			return fail(err)
		} else if !complete {
			continue
		}
		p, err := decodeProgram(buf)
		if err != nil {
			return fail(err)
		}
		want := 3
		if p.Ruleset {
			want = 4
		}
		if len(fds) != want {
			return fail(fmt.Errorf("supervisor: %d descriptors, want %d", len(fds), want))
		}
		return p, fds, nil
	}
}

// writeAll writes b to fd, giving up on the first error, which it
// returns.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
