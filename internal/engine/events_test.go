package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// burstAgent prints n text events in a burst, as an agent's stream read
// from a full pipe arrives, then claims completion; with cancel set it
// is Ctrl-C that ends it instead.
func burstAgent(n int, cancel func()) agent.Agent {
	return agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		for i := range n {
			emit(agent.Event{Kind: agent.KindText, Text: fmt.Sprintf("e%d", i)})
		}
		if cancel != nil {
			cancel()
			return agent.Result{}, ctx.Err()
		}
		return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
	})
}

// countingGate counts the iteration's agent events another process (ralph
// log, the dashboard) sees when the gates run.
type countingGate struct {
	db   string
	seen []int
}

func (g *countingGate) Name() string { return "counting" }
func (g *countingGate) Check(ctx context.Context, env gate.Env) gate.Result {
	r, err := store.Open(ctx, g.db)
	if err != nil {
		return gate.Result{Gate: g.Name(), Status: gate.Fail, Message: err.Error()}
	}
	defer r.Close()
	evs, err := r.EventsPage(ctx, store.EventQuery{Source: store.SourceAgent, Limit: 10000})
	if err != nil {
		return gate.Result{Gate: g.Name(), Status: gate.Fail, Message: err.Error()}
	}
	g.seen = append(g.seen, len(evs))
	return gate.Result{Gate: g.Name(), Status: gate.Pass}
}

// holdWriteLock takes the write lock of the SQLite database at db, as
// another process writing would, until the returned function is called.
func holdWriteLock(db string) (release func(), err error) {
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	if _, err := conn.Exec("BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, err
	}
	return func() {
		_, _ = conn.Exec("ROLLBACK")
		conn.Close()
	}, nil
}

// readEvents returns every event of the store at db, oldest first, as
// another process reads them.
func readEvents(t *testing.T, db string) []store.Event {
	t.Helper()
	r, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	evs, err := r.EventsAfter(context.Background(), 0, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// checkAgentEvents fails unless evs hold the n events of burstAgent,
// contiguous and in the order printed, with every harness event of the
// iteration's end after them.
func checkAgentEvents(t *testing.T, evs []store.Event, n int) {
	t.Helper()
	var agentAt []int
	var got []string
	for i, e := range evs {
		if e.Source == store.SourceAgent {
			agentAt = append(agentAt, i)
			got = append(got, e.Text)
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("e%d", i))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("agent events in id order:\n%s\nwant\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
	if last := agentAt[len(agentAt)-1]; last-agentAt[0] != n-1 {
		t.Errorf("agent events are not contiguous: harness events among them")
	}
	var after []string
	for _, e := range evs[agentAt[len(agentAt)-1]+1:] {
		after = append(after, e.Kind)
	}
	if len(after) == 0 {
		t.Errorf("no harness event after the agent's: %+v", evs)
	}
}

// The gates, and anything reading the store beside the run, see every
// event of the agent's iteration by the time the gates run, in the
// order the agent printed them, and the harness's events of the
// iteration's end come after them. The burst is recorded in fewer
// transactions than events.
func TestAgentEventsCommittedBeforeTheGates(t *testing.T) {
	const n = 300
	ws, st := newBenchWorkspace(t, 1)
	g := &countingGate{db: ws.Path(workspace.Database)}
	// Another process holds the database's write lock while the agent
	// prints, and for a while after it ended: the events are still
	// queued when the agent's run ends, and the gates must wait for them.
	burst := burstAgent(n, nil)
	held := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		release, err := holdWriteLock(ws.Path(workspace.Database))
		if err != nil {
			return agent.Result{}, err
		}
		defer time.AfterFunc(300*time.Millisecond, release)
		return burst.Run(ctx, req, emit)
	})
	opt := Options{Agent: held, Gates: []gate.Gate{g}, Limits: Limits{MaxIterations: 1}}
	out, err := New(ws, st, opt).Run(context.Background(), "print a lot")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("ended %s: %s", out.Reason, out.Detail)
	}
	if len(g.seen) != 1 || g.seen[0] != n {
		t.Errorf("the gate saw %v agent events, want %d", g.seen, n)
	}
	checkAgentEvents(t, readEvents(t, ws.Path(workspace.Database)), n)
	if stats := st.EventStats(); stats.Commits >= stats.Events {
		t.Errorf("event writer: %+v, want fewer commits than events", stats)
	}
}

// Ctrl-C during an iteration loses none of the agent's events: they are
// committed, in order, before the iteration's interruption is.
func TestCtrlCCommitsTheAgentsEvents(t *testing.T) {
	const n = 300
	ws, st := newBenchWorkspace(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := New(ws, st, Options{Agent: burstAgent(n, cancel), Limits: Limits{MaxIterations: 3}}).Run(ctx, "print a lot")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Interrupted {
		t.Fatalf("ended %s: %s", out.Reason, out.Detail)
	}
	// Read beside the open store, as ralph log does while the process
	// that was interrupted still exits.
	checkAgentEvents(t, readEvents(t, ws.Path(workspace.Database)), n)
	its, err := st.Iterations(context.Background(), 1)
	if err != nil || len(its) != 1 || its[0].Outcome != outInterrupt {
		t.Errorf("iterations = %+v (%v), want one, interrupted", its, err)
	}
}
