package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/serve"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/temporalclient"
	"github.com/ralph-harness/ralph/internal/temporalrun"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// flags a Temporal-backed command handles itself and does not pass on to
// the ralph run on the worker.
var temporalOwnFlags = map[string]bool{"temporal": true, "local": true, "namespace": true, "task-queue": true,
	"workflow": true, "remote": true, "heartbeat-timeout": true, "attempts": true, "dir": true, "verbose": true, "json": true}

// pathFlags hold file paths, made relative to the repository root for the
// worker's worktree.
var pathFlags = map[string]bool{"script": true, "planner-script": true, "implementer-script": true, "verifier-script": true}

// addTemporalFlags gives cmd the flags that point it at a Temporal cluster.
func addTemporalFlags(t *temporalclient.Flags, cmd *cobra.Command, submit bool) {
	f := cmd.Flags()
	if cmd.Name() != "worker" {
		what := "follow this checkout's own runs"
		if submit {
			what = "run here"
		}
		f.BoolVar(&t.Local, "local", false, what+" even when ralph.toml sets [temporal] address")
	}
	f.StringVar(&t.Address, "temporal", "", "run against the Temporal cluster at `HOST:PORT` (default [temporal] address in ralph.toml)")
	f.StringVar(&t.Namespace, "namespace", "", "Temporal `NS` (default [temporal] namespace, else default)")
	f.StringVar(&t.Queue, "task-queue", "", "Temporal task `QUEUE` (default [temporal] task_queue, else ralph)")
	if submit {
		f.StringVar(&t.Remote, "remote", "origin", "git remote `NAME` (or URL) the workers clone and push to")
		f.DurationVar(&t.Heartbeat, "heartbeat-timeout", 30*time.Second, "retry an attempt on another worker when not heard from for this long")
		f.IntVar(&t.MaxAttempts, "attempts", 5, "how often a task, or each step of a spec, is started when its worker is lost (the first start counts)")
	} else {
		f.StringVar(&t.Workflow, "workflow", "", "the workflow `ID` (default: the one ralph run --temporal started last here)")
	}
}

// addTemporal gives ralph's commands their --temporal mode.
func addTemporal(g *Globals, root *cobra.Command) {
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "run":
			wrapTemporal(g, cmd, temporalclient.ModeSubmit, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				return temporalclient.RunTask(ctx, g, t, passer(g, cmd), args[0])
			})
		case "resume":
			wrapTemporal(g, cmd, temporalclient.ModeFollowTask, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				return temporalclient.WithWorkflow(ctx, g, t, func(c client.Client, id string) error {
					fmt.Fprintf(g.Stdout, "following workflow %s\n", id)
					return temporalclient.FollowTask(ctx, g, c, id)
				})
			})
		case "status":
			wrapTemporal(g, cmd, temporalclient.ModeFollow, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				asJSON, _ := cmd.Flags().GetBool("json")
				return temporalclient.Status(ctx, g, t, asJSON)
			})
		case "pending":
			wrapTemporal(g, cmd, temporalclient.ModeFollow, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				return temporalclient.Pending(ctx, g, t)
			})
		case "approve", "reject":
			status := store.HumanApproved
			if cmd.Name() == "reject" {
				status = store.HumanRejected
			}
			wrapTemporal(g, cmd, temporalclient.ModeFollow, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				resp, _ := cmd.Flags().GetString("response")
				return temporalclient.Answer(ctx, g, t, args[0], status, resp)
			})
		case "stop":
			wrapTemporal(g, cmd, temporalclient.ModeFollow, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				reason, _ := cmd.Flags().GetString("reason")
				return temporalclient.Stop(ctx, g, t, reason)
			})
		case "serve":
			wrapTemporal(g, cmd, temporalclient.ModeFollow, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
				var o ServeOptions
				o.Addr, _ = cmd.Flags().GetString("addr")
				o.TokenFile, _ = cmd.Flags().GetString("token-file")
				return temporalclient.Serve(ctx, g, t, func(remote serve.Remote) error { return runServe(ctx, g, o, remote) })
			})
		case "specs":
			for _, sub := range cmd.Commands() {
				switch sub.Name() {
				case "run":
					wrapTemporal(g, sub, temporalclient.ModeSubmit, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
						ws, cfg, layout, err := openSpecsLayout(ctx, g, args)
						if err != nil {
							return err
						}
						only, _ := cmd.Flags().GetString("only")
						attempts, _ := cmd.Flags().GetInt("max-attempts")
						return temporalclient.RunSpecs(ctx, g, t, ws, cfg, layout, passer(g, cmd), only, attempts)
					})
				case "status":
					t := wrapTemporal(g, sub, temporalclient.ModeFollowSpecs, func(ctx context.Context, t *temporalclient.Flags, cmd *cobra.Command, args []string) error {
						ws, cfg, layout, err := openSpecsLayout(ctx, g, args)
						if err != nil {
							return err
						}
						return temporalclient.SpecsStatus(ctx, g, t, ws, cfg, layout)
					})
					sub.Flags().StringVar(&t.Remote, "remote", "origin", "git remote `NAME` (or URL) the specs' workflows use")
					_ = sub.Flags().MarkHidden("workflow")
				}
			}
		}
	}
	root.AddCommand(newWorkerCommand(g))
}

// wrapTemporal gives cmd its Temporal mode: with --temporal or
// --workflow, or with [temporal] address in ralph.toml (unless --local),
// fn runs instead of the command's local RunE. Following, ralph.toml's
// address alone switches only when this workspace submitted workflows;
// otherwise the command says so and uses the local store.
func wrapTemporal(g *Globals, cmd *cobra.Command, mode temporalclient.Mode, fn func(context.Context, *temporalclient.Flags, *cobra.Command, []string) error) *temporalclient.Flags {
	t := &temporalclient.Flags{}
	addTemporalFlags(t, cmd, mode == temporalclient.ModeSubmit)
	local := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if t.Local {
			if t.Address != "" || t.Workflow != "" {
				return usageError(errors.New("--local runs here: it does not go with --temporal or --workflow"))
			}
			return local(cmd, args)
		}
		if t.Address == "" && t.Workflow == "" {
			ws, cfg, err := openWorkspace(ctx, g)
			if err != nil || cfg.Temporal.Address == "" {
				return local(cmd, args)
			}
			if mode == temporalclient.ModeSubmit {
				fmt.Fprintf(g.Stderr, "ralph: submitting to Temporal at %s ([temporal] address in ralph.toml); --local runs it here\n", cfg.Temporal.Address)
				return fn(ctx, t, cmd, args)
			}
			if ok, why := temporalclient.FollowsWorkflows(ctx, ws, mode); !ok {
				fmt.Fprintln(g.Stderr, "ralph: "+why)
				return local(cmd, args)
			}
			return fn(ctx, t, cmd, args)
		}
		// --temporal with --workflow names all it needs: no repository.
		_, cfg, err := openWorkspace(ctx, g)
		if err != nil && (t.Address == "" || t.Workflow == "") {
			return err
		}
		if !t.On(cfg) {
			return usageError(temporalrun.ErrNoAddress)
		}
		return fn(ctx, t, cmd, args)
	}
	return t
}

// passArgs turns the flags the user set into argv for the ralph run on
// the worker, file paths made relative to the repository root.
func passArgs(g *Globals, root string, cmd *cobra.Command) ([]string, error) {
	var out []string
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if temporalOwnFlags[f.Name] || err != nil {
			return
		}
		v := f.Value.String()
		if pathFlags[f.Name] {
			v, err = repoRel(g, root, v)
		}
		out = append(out, "--"+f.Name+"="+v)
	})
	return out, err
}

// passer passes the flags set on cmd on to the ralph on a worker.
func passer(g *Globals, cmd *cobra.Command) temporalclient.PassArgs {
	return func(root string) ([]string, error) { return passArgs(g, root, cmd) }
}

// repoRel makes p (relative to --dir) relative to the repository root; it
// must be inside it, since the worker sees only what the remote holds.
func repoRel(g *Globals, root, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.Dir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", usageError(fmt.Errorf("%s is outside the repository: workers only see what is committed and pushed", p))
	}
	return filepath.ToSlash(rel), nil
}

func newWorkerCommand(g *Globals) *cobra.Command {
	var t temporalclient.Flags
	var concurrency int
	var cache, identity string
	var keep time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run ralph's Temporal activities on this machine",
		Long: `Serve a Temporal task queue. A spec's workflow sends one activity per agent
call (plan, implement or verify): the worker clones or fetches the git
remote the submitter named into its cache, checks out the spec's branch
ralph/spec/<id> at the commit the previous step pushed in a fresh worktree,
runs that one step, pushes the branch back, moves the step's store and logs
(its transcript) to the cache's runs/<workflow>/<n>-<step>/ and removes the
worktree. A task holds a session on one worker (its iterations share the
worktree's .ralph/ state) and runs each iteration as one activity on its
branch ralph/task/<id>; its transcript ends in runs/<workflow>/task-attempt-<n>/. Activities
heartbeat every second with the iteration and event count; when the worker
dies, Temporal retries a spec's step on another worker from the same
commit, and starts a task again there from its base commit.`,
		Example: `  ralph worker --temporal localhost:7233
  ralph worker --temporal localhost:7233 --task-queue ralph --concurrency 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg := config.Default()
			if ws, err := workspace.Open(ctx, g.Dir); err == nil {
				if c, err := config.Load(ws.Root); err == nil {
					cfg = c
				}
			}
			c, s, err := t.Dial(ctx, g, cfg)
			if err != nil {
				return err
			}
			defer c.Close()
			if cache == "" {
				base, err := os.UserCacheDir()
				if err != nil {
					return err
				}
				cache = filepath.Join(base, "ralph", "worker")
			}
			if cache, err = filepath.Abs(cache); err != nil {
				return err
			}
			if identity == "" {
				host, _ := os.Hostname()
				identity = fmt.Sprintf("%s-%d", host, os.Getpid())
			}
			if keep < 0 {
				return usageError(errors.New("--keep must not be negative"))
			}
			r := &temporalrun.Runner{Client: c, Cache: cache, Identity: identity, Log: g.Logger, Keep: keep}
			fmt.Fprintf(g.Stdout, "worker %s serving %s/%s at %s (cache %s)\n", identity, s.Namespace, s.TaskQueue, s.Address, cache)
			return temporalrun.Serve(ctx, r, s.TaskQueue, concurrency)
		},
	}
	addTemporalFlags(&t, cmd, false)
	_ = cmd.Flags().MarkHidden("workflow")
	cmd.Flags().IntVar(&concurrency, "concurrency", 4, "attempts run at once")
	cmd.Flags().StringVar(&cache, "cache", "", "`DIR` for clones and worktrees (default: the user cache dir's ralph/worker)")
	cmd.Flags().StringVar(&identity, "identity", "", "this worker's `NAME` in heartbeats and results (default host-pid)")
	cmd.Flags().DurationVar(&keep, "keep", 7*24*time.Hour, "keep transcripts (spec steps, task attempts) under the cache's runs/ this `LONG`; older ones are pruned at start and hourly (0 keeps them for ever); worktrees of workflows that ended or were cancelled go then too")
	return cmd
}
