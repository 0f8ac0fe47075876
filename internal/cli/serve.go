package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/serve"
	"github.com/ralph-harness/ralph/internal/status"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// ServeOptions are the flags of ralph serve.
type ServeOptions struct {
	Addr      string
	TokenFile string
	Page      string // the page the printed URL opens, "/" by default
}

// AddFlags registers the options' flags on cmd.
func (o *ServeOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:7777", "listen on `HOST:PORT` (port 0 picks a free one); a non-loopback host needs the token for every request")
	cmd.Flags().StringVar(&o.TokenFile, "token-file", "", "keep the access token in `FILE` (reused when it exists) instead of a new one in .ralph/serve.token")
}

func newServeCommand(g *Globals) *cobra.Command {
	var o ServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the live dashboard: run, events, gates, plan, snapshots, approvals",
		Long: `Serve a web dashboard of this workspace: the current task, the live event
stream, gates, the plan, snapshots with diff and rollback, the spec
pipeline, and the requests a plan's <Human> makes, with Approve, Reject and
Stop buttons. It works beside a running ralph run, resume or specs run in
another process, or with none.

It prints one line with the URL, which carries an access token (also
written, mode 0600, to .ralph/serve.token). On a loopback address pages are
open to read and every action needs the token; on any other address every
request needs it. One dashboard serves a workspace at a time. On every
interface (--addr 0.0.0.0:PORT) it prints a URL per network address;
plain HTTP off the machine belongs behind TLS. The same data is JSON
under /api/.`,
		Example: `  ralph serve
  ralph serve --addr 0.0.0.0:7777 --token-file ~/.ralph-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), g, o, nil)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func newPreviewCommand(g *Globals) *cobra.Command {
	o := ServeOptions{Page: "/preview"}
	cmd := &cobra.Command{Use: "preview", Args: cobra.NoArgs,
		Short: "Serve the dashboard's Preview page: the app live, its latest screenshots, the ui-renders findings",
		RunE:  func(cmd *cobra.Command, args []string) error { return runServe(cmd.Context(), g, o, nil) }}
	o.AddFlags(cmd)
	return cmd
}

// runServe serves the workspace; remote, when set, is the Temporal
// workflow whose status and requests the API shows and answers.
func runServe(ctx context.Context, g *Globals, o ServeOptions, remote serve.Remote) error {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return err
	}
	// One dashboard per workspace: a second would replace the first's
	// token and lock its user out.
	lock, err := serve.LockWorkspace(ws)
	if err != nil {
		return err
	}
	defer lock.Release()
	tokenFile := o.TokenFile
	if tokenFile == "" {
		tokenFile = ws.Path(serve.TokenFile)
	}
	token, err := serve.LoadToken(ws, o.TokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return usageError(fmt.Errorf("listen on %s: %w", o.Addr, err))
	}
	srv, err := serve.New(serve.Options{
		Workspace: ws,
		Token:     token,
		TokenFile: tokenFile,
		Loopback:  serve.IsLoopback(ln.Addr().String()),
		Remote:    remote,
		Secrets:   secrets.Values(os.Environ(), ws.Root),
		Logger:    g.Logger,
		Specs: func(ctx context.Context) ([]serve.SpecRow, error) {
			layout, err := specsLayout(g, ws, cfg, "")
			if err != nil {
				return nil, nil // no specs folder: an empty pipeline
			}
			if _, err := os.Stat(layout.Dir); err != nil {
				return nil, nil
			}
			return status.SpecRows(ctx, ws, layout)
		},
		Status: func(ctx context.Context, ws *workspace.Workspace, st *store.Store) (any, error) {
			rep, err := buildStatus(ctx, ws, st)
			var ee *failure.Error
			if errors.As(err, &ee) && ee.Err != nil {
				return nil, ee.Err
			}
			return rep, err
		},
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go srv.Watch(ctx)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(g.Logger.Handler(), slog.LevelWarn),
		// Requests end with the command, so open event streams do not
		// hold up the shutdown.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	lock.Record(serve.SelfURL(ln.Addr(), ""))
	for _, u := range serve.SelfURLs(ln.Addr(), token) {
		fmt.Fprintf(g.Stdout, "ralph serve: %s\n", strings.Replace(u, "/?", cmp.Or(o.Page, "/")+"?", 1))
	}
	if !serve.IsLoopback(ln.Addr().String()) {
		fmt.Fprintln(g.Stdout, "ralph serve: this is plain HTTP: off this machine, serve it behind TLS (a reverse proxy or a tunnel) so the token cannot be read on the way")
	}
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
