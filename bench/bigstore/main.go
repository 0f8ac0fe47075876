// Command bigstore times `ralph status` and `ralph log -n 50` on a store
// of many events against `ralph version` (the process start) in the same
// run:
//
//	go run ./bench/bigstore -ralph PATH [-events 100000] [-rounds 15]
//
// It makes (once, under -work) a workspace whose store holds one task of
// -events events over -events/50 iterations, written in one transaction,
// then runs the three commands in turn -rounds times and prints each one's
// median wall and CPU time (user and system; steadier than wall time on a
// loaded machine), and the load average.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/bench/internal/figure"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

func main() {
	ralph := flag.String("ralph", "", "path of the ralph binary")
	events := flag.Int("events", 100_000, "events in the store")
	rounds := flag.Int("rounds", 15, "runs of each command, in turn")
	work := flag.String("work", filepath.Join(os.TempDir(), "ralph-bigstore"), "where the workspace is kept between calls")
	flag.Parse()
	if *ralph == "" {
		fail("-ralph is required")
	}
	bin, err := filepath.Abs(*ralph)
	if err != nil {
		fail(err.Error())
	}
	dir := filepath.Join(*work, fmt.Sprintf("events-%d", *events))
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "ralph.db")); err != nil {
		if err := makeStore(dir, *events); err != nil {
			fail(err.Error())
		}
	}
	cmds := [][]string{{"version"}, {"status"}, {"log", "-n", "50"}}
	times := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	before := figure.LoadAvg()
	for range *rounds {
		for i, args := range cmds {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				fail(fmt.Sprintf("ralph %s: %v\n%s", strings.Join(args, " "), err, out))
			}
			times[i] = append(times[i], float64(time.Since(t0).Microseconds())/1000)
			used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			cpu[i] = append(cpu[i], float64(used.Microseconds())/1000)
		}
	}
	fmt.Printf("a store of %d events, median of %d runs each (load average %s before, %s after):\n", *events, *rounds, before, figure.LoadAvg())
	for i, args := range cmds {
		fmt.Printf("  ralph %-10s %7.1f ms wall, %5.1f ms cpu\n", strings.Join(args, " "), figure.Median(times[i]), figure.Median(cpu[i]))
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bigstore:", msg)
	os.Exit(1)
}

// makeStore writes a workspace at dir whose store holds one finished task
// with n events.
func makeStore(dir string, n int) error {
	ctx := context.Background()
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if out, err := exec.Command("git", "init", "-q", tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	ws, err := workspace.Open(ctx, tmp)
	if err != nil {
		return err
	}
	if err := ws.Init(); err != nil {
		return err
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		return err
	}
	defer st.Close()
	task, err := st.CreateTask(ctx, 1, "a long run", "feature", "claude")
	if err != nil {
		return err
	}
	iterations := max(1, n/50)
	for i := 1; i <= iterations; i++ {
		if err := st.StartIteration(ctx, task, i, "build", ""); err != nil {
			return err
		}
		if err := st.EndIteration(ctx, store.Iteration{TaskID: task, Number: i, Phase: "build", Outcome: "continue", ToolCalls: 16, CostUSD: 0.01, InputTokens: 1000, OutputTokens: 200}); err != nil {
			return err
		}
	}
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range n {
		kind, tool, text, data := "text", "", fmt.Sprintf("thinking about step %d of the plan", i), ""
		switch i % 3 {
		case 1:
			kind, tool, text, data = "tool_call", "shell", "", fmt.Sprintf(`{"argv":["go","test","./pkg%d/..."]}`, i)
		case 2:
			kind, text = "tool_result", strings.Repeat("ok  \tgithub.com/x/y\t0.1s\n", 1+i%7)
		}
		if _, err := ins.ExecContext(ctx, task, 1+i/50, at, store.SourceAgent, kind, tool, text, data); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := st.EndTask(ctx, task, store.TaskDone, "max-iterations", "used every iteration"); err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
