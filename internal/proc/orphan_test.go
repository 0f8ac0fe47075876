package proc

import (
	"slices"
	"testing"
)

// fakeProc is one process of a fakeTable.
type fakeProc struct {
	start uint64
	pgid  int
	token string
}

// fakeTable is a process table written out by a test.
type fakeTable map[int]fakeProc

func (f fakeTable) Stat(pid int) (uint64, int, bool) {
	p, ok := f[pid]
	return p.start, p.pgid, ok
}

func (f fakeTable) Members(pgid int) []int {
	var out []int
	for pid, p := range f {
		if p.pgid == pgid {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

func (f fakeTable) HasToken(pid int, token string) bool { return f[pid].token == token }

func (f fakeTable) Carrying(token string) []int {
	var out []int
	for pid, p := range f {
		if p.token == token {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

func TestJudge(t *testing.T) {
	// Ralph 100 started at tick 5000 recorded group 200 (leader start 6000,
	// token tok); 300 is another group nobody recorded.
	rec := Group{PGID: 200, LeaderStart: 6000, Token: "tok", OwnerPID: 100, OwnerStart: 5000}
	group := fakeTable{200: {6000, 200, "tok"}, 201: {6100, 200, "tok"}, 300: {7000, 300, ""}}
	with := func(extra fakeTable) fakeTable {
		t := fakeTable{}
		for k, v := range group {
			t[k] = v
		}
		for k, v := range extra {
			t[k] = v
		}
		return t
	}
	for _, tc := range []struct {
		name  string
		rec   Group
		table fakeTable
		want  Verdict
		pids  []int
		whole bool
	}{
		{"dead ralph, live group: kill the group", rec, group, Orphaned, []int{200, 201}, true},
		{"live ralph: never", rec, with(fakeTable{100: {5000, 100, ""}}), OwnerAlive, nil, false},
		{"ralph's pid reused by another process: ralph is dead", rec, with(fakeTable{100: {9000, 100, ""}}), Orphaned, []int{200, 201}, true},
		{"owner start unknown and pid alive: never", Group{PGID: 200, LeaderStart: 6000, Token: "tok", OwnerPID: 100}, with(fakeTable{100: {9000, 100, ""}}), OwnerAlive, nil, false},
		{"dead ralph, group ended", rec, fakeTable{300: {7000, 300, ""}}, Gone, nil, false},
		{"group id reused by a later leader: gone", rec, fakeTable{200: {8000, 200, ""}, 201: {8100, 200, ""}}, Gone, nil, false},
		{"leader killed, members with the token remain", rec, fakeTable{201: {6100, 200, "tok"}, 202: {6200, 200, "tok"}}, Orphaned, []int{201, 202}, false},
		{"leader gone, members without the token are not ours", rec, fakeTable{201: {6100, 200, "other"}, 202: {6200, 200, ""}}, Gone, nil, false},
		{"leader gone, only the token holders are", rec, fakeTable{201: {6100, 200, "tok"}, 202: {6200, 200, ""}}, Orphaned, []int{201}, false},
		{"a member left the group with setsid: found by its token", rec, with(fakeTable{400: {6500, 400, "tok"}}), Orphaned, []int{200, 201, 400}, true},
		{"group ended, a setsid escapee with the token remains", rec, fakeTable{400: {6500, 400, "tok"}, 300: {7000, 300, ""}}, Orphaned, []int{400}, false},
		{"group id reused, an escapee with the token remains", rec, fakeTable{200: {8000, 200, ""}, 400: {6500, 400, "tok"}}, Orphaned, []int{400}, false},
		{"an escapee of another group is not ours", rec, fakeTable{400: {6500, 400, "other"}}, Gone, nil, false},
		// On record before it started: its token alone says what is its.
		{"recorded before it started: found by its token", Group{Token: "tok", OwnerPID: 100, OwnerStart: 5000}, with(fakeTable{400: {6500, 400, "tok"}, 0: {1, 0, ""}}), Orphaned, []int{200, 201, 400}, false},
		{"recorded before it started, never started", Group{Token: "tok", OwnerPID: 100, OwnerStart: 5000}, fakeTable{300: {7000, 300, ""}}, Gone, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, o := Judge(tc.rec, tc.table)
			if v != tc.want {
				t.Fatalf("verdict = %d, want %d", v, tc.want)
			}
			if !slices.Equal(o.PIDs, tc.pids) || o.Whole != tc.whole {
				t.Errorf("orphan = pids %v whole %v, want %v %v", o.PIDs, o.Whole, tc.pids, tc.whole)
			}
		})
	}
}

// Only recorded groups are ever found: a live group nobody recorded, or one
// whose ralph runs, is in neither list.
func TestFindOrphansOnlyRecorded(t *testing.T) {
	table := fakeTable{
		100: {5000, 100, ""},                         // a live ralph
		200: {6000, 200, "a"}, 300: {7000, 300, "b"}, // its group; a dead ralph's group
		400: {8000, 400, "c"}, 401: {8100, 400, "c"}, // nobody recorded this one
	}
	groups := []Group{
		{ID: 1, PGID: 200, LeaderStart: 6000, Token: "a", OwnerPID: 100, OwnerStart: 5000},
		{ID: 2, PGID: 300, LeaderStart: 7000, Token: "b", OwnerPID: 150, OwnerStart: 5500},
		{ID: 3, PGID: 500, LeaderStart: 9000, Token: "d", OwnerPID: 150, OwnerStart: 5500},
	}
	orphans, gone := FindOrphans(groups, table)
	if len(orphans) != 1 || orphans[0].ID != 2 || !slices.Equal(orphans[0].PIDs, []int{300}) {
		t.Errorf("orphans = %+v, want only group 2 (pid 300)", orphans)
	}
	if len(gone) != 1 || gone[0].ID != 3 {
		t.Errorf("gone = %+v, want only group 3", gone)
	}
}
