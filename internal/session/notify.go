package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/notify"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// StartNotifier starts the notifications ralph.toml's [notify]
// configures, for the process that holds ws's lock (a run), with the
// run's max_cost: it sends
// what the store shows to the channels and takes their answers back.
// stop sends what is left, waiting a few seconds at most. A channel
// whose secret is missing is a warning; nothing here fails the run.
func StartNotifier(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Notify, maxCost float64) (stop func()) {
	return StartNotifierLog(ctx, g.Logger, ws, st, cfg, maxCost)
}

// StartNotifierLog is StartNotifier with a logger for a process without
// Globals (ralph serve). The notifier runs only while this process holds
// the workspace's notify lock: when a run and ralph serve both want it,
// the first keeps it and the other takes over when it ends.
func StartNotifierLog(ctx context.Context, logger *slog.Logger, ws *workspace.Workspace, st *store.Store, cfg config.Notify, maxCost float64) (stop func()) {
	chans, errs := notify.Channels(cfg, os.Getenv)
	for _, err := range errs {
		logger.Warn(err.Error(), "component", "notify")
	}
	if len(chans) == 0 {
		return func() {}
	}
	n := notify.New(notify.Options{
		Store: st, Channels: chans, Workspace: filepath.Base(ws.Root), DashboardURL: cfg.DashboardURL,
		MaxCost: maxCost, Scrub: secrets.ForProcess(ws.Root), Logger: logger,
	})
	return notify.Lead(ctx, ws.Path(workspace.NotifyLock), 2*time.Second, func() func() { return n.Start(ctx) })
}

// NotifyCommand returns the engine's Notify for [notify] command (argv,
// never a shell string, run in root with the message as its last
// argument); nil when there is none.
func NotifyCommand(g *Globals, root string, argv []string) func(ctx context.Context, msg string) {
	if len(argv) == 0 {
		return nil
	}
	return func(ctx context.Context, msg string) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := proc.Run(ctx, proc.Spec{Argv: append(append([]string(nil), argv...), msg), Dir: root}); err != nil {
			g.Logger.Warn("notify", "err", err)
		}
	}
}

// TestNotify is ralph notify test: a test message through each [notify]
// channel (only the one named, when set), and for the two-way ones a wait
// of up to wait for a tap that proves the round trip. It holds the
// workspace lock, as the one process that may listen to the bots.
func TestNotify(ctx context.Context, g *Globals, only string, wait time.Duration) error {
	ws, cfg, err := OpenWorkspace(ctx, g)
	if err != nil {
		return err
	}
	chans, errs := notify.Channels(cfg.Notify, os.Getenv)
	for _, err := range errs {
		fmt.Fprintln(g.Stderr, "ralph: warning:", err)
	}
	if len(chans) == 0 {
		return failure.New(failure.Usage, errors.New("no [notify] channel to test: configure [notify.telegram], [notify.slack], [notify.ntfy] or [notify.webhook] in ralph.toml"))
	}
	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, fmt.Errorf("%w (a running ralph listens to the channels; test when it ends)", err))
	}
	defer lock.Release()
	release, err := notify.TryLead(ws.Path(workspace.NotifyLock))
	if err != nil {
		return failure.New(failure.Failed, fmt.Errorf("%w: stop ralph serve to test", err))
	}
	defer release()
	st, err := OpenStore(ctx, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	n := notify.New(notify.Options{Store: st, Channels: chans, Workspace: filepath.Base(ws.Root), DashboardURL: cfg.Notify.DashboardURL,
		Scrub: secrets.ForProcess(ws.Root), Logger: g.Logger})
	if err := n.Test(ctx, only, wait, g.Stdout); err != nil {
		return failure.New(failure.Failed, err)
	}
	return nil
}
