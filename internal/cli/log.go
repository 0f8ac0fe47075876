package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/store"
)

func newLogCommand(g *Globals) *cobra.Command {
	var follow, asJSON, all, specs bool
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the event stream: what the agent did and what the harness decided",
		Long: `Show the current task's events: the agent's text, tool calls with their
input, tool results, usage, and the harness's decisions (plan validated,
gates failed, stalls, the end). -f follows a running task until it ends.

After ralph specs run (or with --specs), show the spec pipeline's agent
calls and landings instead, each with its spec and worktree, as they start
and end: with --parallel N, one line per spec's step as it happens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, st, err := openRunStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			if !specs && !all {
				specs, err = specsAreLatest(ctx, st)
				if err != nil {
					return err
				}
			}
			if specs {
				return followSpecCalls(ctx, g, ws, st, follow)
			}
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
			for {
				evs, err := st.EventsAfter(ctx, taskID, after, 500)
				if err != nil {
					return err
				}
				for _, e := range evs {
					printEvent(g, e, asJSON)
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
								printEvent(g, e, asJSON)
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
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they happen, until the task ends")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per event")
	cmd.Flags().BoolVar(&all, "all", false, "show every task's events, not just the latest task's")
	cmd.Flags().BoolVar(&specs, "specs", false, "show the spec pipeline's calls (ralph specs run) instead of a task's events")
	return cmd
}

func printEvent(g *Globals, e store.Event, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(e)
		fmt.Fprintf(g.Stdout, "%s\n", b)
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
	fmt.Fprintf(g.Stdout, "%s #%d %-5s %-12s %s\n", ts, e.Iteration, who, e.Kind, trimOneLine(text, 160))
}

// specsAreLatest reports whether the workspace's latest activity is a spec
// run: a spec call started after the latest task did.
func specsAreLatest(ctx context.Context, st *store.Store) (bool, error) {
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
