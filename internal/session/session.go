// Package session holds what every ralph command works with: the streams
// it reads and writes, the directory it works in, its logger and the run
// log behind it, and the ways it opens the workspace and the run's store.
package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Globals carries what every command needs: the streams it writes to, the
// directory it works in and a logger.
type Globals struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the directory ralph works in (the --dir flag, default ".").
	Dir string
	// Logger writes to the run log (.ralph/logs/ralph.log), to stderr
	// only with -v, and shows warnings as ralph's own lines (see
	// logOutput).
	Logger *slog.Logger
	// Verbose turns on debug logging to stderr.
	Verbose bool
	logs    *logOutput
	// ws is the workspace OpenWorkspace found from wsDir (a Dir), kept:
	// the working tree's top does not move under a command, and finding
	// it costs a git.
	ws    *workspace.Workspace
	wsDir string
}

// StartLog sets g.Logger up, once the flags are parsed: to the run log
// once a workspace is open, to stderr with -v, warnings as notices.
func (g *Globals) StartLog() {
	g.logs = newLogOutput(g.Stderr, g.Verbose)
	g.Logger = g.logs.logger()
}

// ShowNotices routes the log's warnings and errors to show (a run's
// progress reporter) until the returned function is called.
func (g *Globals) ShowNotices(show func(level slog.Level, text string)) (stop func()) {
	if g.logs == nil {
		return func() {}
	}
	return g.logs.setNotice(show)
}

// Close closes the run log.
func (g *Globals) Close() error {
	if g.logs == nil {
		return nil
	}
	return g.logs.Close()
}

// OpenWorkspace finds the workspace (once for g's Dir) and reads its
// configuration.
func OpenWorkspace(ctx context.Context, g *Globals) (*workspace.Workspace, config.Config, error) {
	ws := g.ws
	if ws == nil || g.wsDir != g.Dir {
		var err error
		if ws, err = workspace.Open(ctx, g.Dir); err != nil {
			return nil, config.Config{}, failure.New(failure.Usage, err)
		}
		g.ws, g.wsDir = ws, g.Dir
	}
	if g.logs != nil {
		g.logs.useWorkspace(ws)
	}
	cfg, err := config.Load(ws.Root)
	if err != nil {
		return nil, config.Config{}, failure.New(failure.Usage, err)
	}
	proc.Withhold(cfg.Notify.SecretVars()...)
	return ws, cfg, nil
}

// OpenStore opens the workspace's database, creating .ralph/ if needed.
func OpenStore(ctx context.Context, ws *workspace.Workspace) (*store.Store, error) {
	if err := os.MkdirAll(ws.StateDir(), 0o755); err != nil {
		return nil, err
	}
	return store.Open(ctx, ws.Path(workspace.Database))
}

// OpenRunStore opens the workspace and the database a run created, for the
// commands that work beside a run (status, log, stop, pending, approve,
// reject). It fails clearly when no run has created the database yet, and
// never creates it.
func OpenRunStore(ctx context.Context, g *Globals) (*workspace.Workspace, *store.Store, error) {
	ws, _, err := OpenWorkspace(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(ws.Path(workspace.Database)); err != nil {
		return nil, nil, failure.New(failure.Failed, errors.New("no ralph run in this workspace yet (start one with `ralph run \"message\"`)"))
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		return nil, nil, err
	}
	return ws, st, nil
}
