package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Events prints the latest task's events (every task's with all), one
// line each or JSON lines with asJSON; with last > 0 only the last that
// many, found through the (task_id, id) index whatever the stream's
// length. With follow it goes on until the task ends, and on to the next
// task when one starts.
func Events(ctx context.Context, w io.Writer, ws *workspace.Workspace, st *store.Store, all, follow, asJSON bool, last int) error {
	var taskID int64
	if !all {
		t, err := st.LatestTask(ctx)
		if errors.Is(err, store.ErrNoTask) {
			return failure.New(failure.Failed, err)
		}
		if err != nil {
			return err
		}
		taskID = t.ID
	}
	var after int64
	if last > 0 {
		evs, err := st.EventsPage(ctx, store.EventQuery{TaskID: taskID, Limit: last})
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID - 1 // newest first: the oldest is last
		}
	}
	for {
		evs, err := st.EventsAfter(ctx, taskID, after, 500)
		if err != nil {
			return err
		}
		for _, e := range evs {
			printEvent(w, e, asJSON)
			after = e.ID
		}
		if len(evs) == 500 {
			continue
		}
		if !follow {
			return nil
		}
		if taskID != 0 && ws.HolderPID() == 0 {
			if t, err := st.GetTask(ctx, taskID); err == nil && t.Status != store.TaskRunning {
				// Drain anything written between the read and now.
				if evs, _ := st.EventsAfter(ctx, taskID, after, 1<<20); len(evs) > 0 {
					for _, e := range evs {
						printEvent(w, e, asJSON)
					}
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		// A new task may have started: follow it.
		if !all {
			if t, err := st.LatestTask(context.WithoutCancel(ctx)); err == nil && t.ID != taskID {
				taskID = t.ID
			}
		}
	}
}

func printEvent(w io.Writer, e store.Event, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(e)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	ts := e.At.Local().Format("15:04:05")
	who := "agent"
	if e.Source == store.SourceHarness {
		who = "ralph"
	}
	text := e.Text
	if e.Kind == "tool_call" {
		text = e.Tool + " " + progress.SummarizeInput(json.RawMessage(e.Data))
	}
	fmt.Fprintf(w, "%s #%d %-5s %-12s %s\n", ts, e.Iteration, who, e.Kind, progress.OneLine(text, 160))
}

// SpecsAreLatest reports whether the workspace's latest activity is a spec
// run: a spec call started after the latest task did.
func SpecsAreLatest(ctx context.Context, st *store.Store) (bool, error) {
	calls, err := st.SpecCalls(ctx, 0)
	if err != nil || len(calls) == 0 {
		return false, err
	}
	t, err := st.LatestTask(ctx)
	if errors.Is(err, store.ErrNoTask) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return calls[len(calls)-1].StartedAt.After(t.StartedAt), nil
}
