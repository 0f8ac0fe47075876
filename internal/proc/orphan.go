package proc

import "slices"

// Group is a process group as a ralph process recorded it when it
// started it (see StartHook).
type Group struct {
	// ID is the caller's record id, carried through untouched.
	ID int64
	// PGID, LeaderStart and Token are as in Started; PGID and
	// LeaderStart are zero for a group recorded only before it started.
	PGID        int
	LeaderStart uint64
	Token       string
	// OwnerPID and OwnerStart identify the ralph process that started
	// the group (see Self).
	OwnerPID   int
	OwnerStart uint64
	// Argv0 is the program, for messages.
	Argv0 string
}

// ProcessTable is what orphan detection reads about running processes.
type ProcessTable interface {
	// Stat returns pid's start time and process group; alive is false
	// when no such process runs (a zombie does not run).
	Stat(pid int) (start uint64, pgid int, alive bool)
	// Members lists the running processes of group pgid.
	Members(pgid int) []int
	// HasToken reports whether pid's environment carries the group
	// token RALPH_PROC_TOKEN=token.
	HasToken(pid int, token string) bool
	// Carrying lists the running processes whose environment carries
	// the group token, in whatever group or session they now are.
	Carrying(token string) []int
}

// Processes returns the machine's process table.
func Processes() ProcessTable { return processes() }

// Verdict is what Judge decides about a recorded group.
type Verdict int

// Verdicts.
const (
	// OwnerAlive: the ralph that started the group still runs; never
	// touch the group.
	OwnerAlive Verdict = iota
	// Gone: the owner is dead and nothing of the group runs any more.
	Gone
	// Orphaned: the owner is dead and processes of the group still run.
	Orphaned
)

// Orphan is a recorded group whose ralph died while processes of it
// still run.
type Orphan struct {
	Group
	// PIDs are the group's running processes, and those that left it
	// (setsid) but carry its token.
	PIDs []int
	// Whole is true when the group's leader still runs as recorded, so
	// the group can be signalled as one; each of PIDs is signalled as
	// well, being recognised by the group's token in its environment.
	Whole bool
}

// Judge decides whether g is an orphan. A group is only ever found
// orphaned when its recorded owner is dead (no process with that pid, or
// one with a different start time: the pid was reused) and processes
// that provably belong to it still run: its leader with the recorded start
// time and its members, and any process, in the group or one that left it
// with setsid, whose environment carries the group's token. The kernel
// never gives a new process the pid of a live group's id, so a leader
// alive with its start time is the group.
func Judge(g Group, t ProcessTable) (Verdict, Orphan) {
	if start, _, alive := t.Stat(g.OwnerPID); alive && (g.OwnerStart == 0 || start == g.OwnerStart) {
		return OwnerAlive, Orphan{}
	}
	o := Orphan{Group: g}
	// A group recorded before it started (its ralph killed before the
	// group id was on record) has only its token.
	if g.PGID > 0 {
		start, pgid, alive := t.Stat(g.PGID)
		if alive && g.LeaderStart != 0 && start == g.LeaderStart && pgid == g.PGID {
			o.Whole = true
			o.PIDs = t.Members(g.PGID)
		}
	}
	// Otherwise the leader is dead, or its pid belongs to another process
	// now: only the token says what is the group's.
	if g.Token != "" {
		for _, pid := range t.Carrying(g.Token) {
			if !slices.Contains(o.PIDs, pid) {
				o.PIDs = append(o.PIDs, pid)
			}
		}
		slices.Sort(o.PIDs)
	}
	if len(o.PIDs) == 0 {
		return Gone, Orphan{}
	}
	return Orphaned, o
}

// FindOrphans judges each recorded group and returns the orphans and the
// groups that are gone (whose records can be closed). Groups whose owner
// still runs appear in neither.
func FindOrphans(groups []Group, t ProcessTable) (orphans []Orphan, gone []Group) {
	for _, g := range groups {
		switch v, o := Judge(g, t); v {
		case Orphaned:
			orphans = append(orphans, o)
		case Gone:
			gone = append(gone, g)
		}
	}
	return orphans, gone
}
