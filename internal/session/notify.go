package session

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/notify"
	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// StartNotifier starts the notifications ralph.toml's [notify]
// configures, for the process that holds ws's lock (a run): it sends
// what the store shows to the channels and takes their answers back.
// stop sends what is left, waiting a few seconds at most. A channel
// whose secret is missing is a warning; nothing here fails the run.
func StartNotifier(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config) (stop func()) {
	chans, errs := notify.Channels(cfg.Notify, os.Getenv)
	for _, err := range errs {
		g.Logger.Warn(err.Error(), "component", "notify")
	}
	if len(chans) == 0 {
		return func() {}
	}
	n := notify.New(notify.Options{
		Store: st, Channels: chans, Workspace: filepath.Base(ws.Root), DashboardURL: cfg.Notify.DashboardURL,
		MaxCost: cfg.Limits.MaxCost, Scrub: secrets.ForProcess(ws.Root), Logger: g.Logger,
	})
	return n.Start(ctx)
}
