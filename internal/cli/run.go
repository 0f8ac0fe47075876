package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/agent/amp"
	"github.com/ralph-harness/ralph/internal/approval"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/detect"
	"github.com/ralph-harness/ralph/internal/doctor"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/planreport"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// keyAgentFlags remembers the agent flags of the last run for resume.
const keyAgentFlags = "cli:agent_flags"

// RunOptions are the flags of ralph run and ralph resume.
type RunOptions struct {
	agent            agentFlags
	maxIterations    int
	maxCost          float64
	maxDuration      time.Duration
	iterationTimeout time.Duration
	idleTimeout      time.Duration
	json             bool
	force            bool
	worktree         bool
	plan             string // --plan FILE, handed in
	planSrc          []byte // its content, once validated
	// yieldAfter is the hidden --yield-after: return after this many
	// iterations, leaving the task open for ralph resume (exit 13).
	yieldAfter int
}

// AddFlags registers the run flags on cmd.
func (o *RunOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.agent.Name, "agent", "", "agent `NAME`: auto, claude, codex, opencode, gemini, qwen, copilot, amp, api, command or script, or a fallback chain such as claude,codex (default from ralph.toml, else auto)")
	f.StringVar(&o.agent.Script, "script", "", "script `FILE` for --agent script (a scripted stand-in for a model)")
	f.StringVar(&o.agent.Command, "command", "", "program for --agent command, split on spaces (no shell); the prompt arrives on stdin")
	f.StringVar(&o.agent.Model, "model", "", "model for agents that choose one")
	f.IntVar(&o.maxIterations, "max-iterations", 0, "stop after `N` iterations (default 20, or ralph.toml)")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop once the task has cost `USD` dollars (default: no cap)")
	f.DurationVar(&o.maxDuration, "timeout", 0, "stop after this long in all (e.g. 2h; default: no limit)")
	f.DurationVar(&o.iterationTimeout, "iteration-timeout", 0, "kill an iteration's agent after this long (default 30m)")
	f.DurationVar(&o.idleTimeout, "idle-timeout", 0, "kill the agent after this long without output (default 10m)")
	f.BoolVar(&o.json, "json", false, "print progress and the outcome as JSON lines")
	// A Temporal worker runs a task one iteration per activity: ralph run
	// --yield-after 1, then ralph resume --yield-after 1 until the task
	// ends. Not for people, so hidden.
	f.IntVar(&o.yieldAfter, "yield-after", 0, "return after `N` iterations that did not end the task, leaving it open for ralph resume, with exit code 13 (yielded); the task's counts (gate-failure streak, stall detection, time spent) go on in the resume")
	_ = f.MarkHidden("yield-after")
}

// check refuses limits that are negative or not numbers, as ralph.toml's
// are refused (config.CheckBounds); 0 leaves ralph.toml's or the default.
func (o *RunOptions) check() error {
	if err := config.CheckBounds(config.Int("--max-iterations", o.maxIterations), config.Float("--max-cost", o.maxCost),
		config.Dur("--timeout", o.maxDuration), config.Dur("--iteration-timeout", o.iterationTimeout), config.Dur("--idle-timeout", o.idleTimeout)); err != nil {
		return usageError(err)
	}
	if o.plan != "" && o.worktree {
		return usageError(errors.New("--plan cannot be combined with --worktree yet: hand the plan in with a plain ralph run"))
	}
	return nil
}

func (o *RunOptions) apply(cfg *config.Config) {
	if o.maxIterations > 0 {
		cfg.Limits.MaxIterations = o.maxIterations
	}
	if o.maxCost > 0 {
		cfg.Limits.MaxCost = o.maxCost
	}
	if o.maxDuration > 0 {
		cfg.Limits.MaxDuration.Duration = o.maxDuration
	}
	if o.iterationTimeout > 0 {
		cfg.Limits.IterationTimeout.Duration = o.iterationTimeout
	}
	if o.idleTimeout > 0 {
		cfg.Limits.IdleTimeout.Duration = o.idleTimeout
	}
	if o.agent.Model != "" {
		cfg.Model = o.agent.Model
	}
}

func newRunCommand(g *Globals) *cobra.Command {
	var o RunOptions
	cmd := &cobra.Command{
		Use:   "run [flags] \"message\"",
		Short: "Run a task: plan, build and verify until the gates pass",
		Long: `Run a task in this git repository. ralph snapshots the tree (task-N-pre),
writes the task to .ralph/task.md and runs the agent in fresh-context
iterations. The agent writes a plan to .ralph/plan.tsx; the harness validates
it and only then moves to the BUILD phase. When the agent asks to finish, the
quality gates decide. A task that passes is snapshotted as task-N-post.

Agents: claude, codex, opencode, gemini, qwen and copilot are tested end to
end against their real CLIs (see the README for each one's setup). Not amp:
` + amp.Caveat + `.

The run ends with one of these reasons and exit codes:
  completed 0, max-iterations 3, max-duration 4, max-cost 5, gate-failures 6,
  stalled 7, stopped 8, rejected 9, agent-error 10, needs-clarification 11,
  protected-changed 14 (the agent changed a test or gate file under
  [guard] on_change = "fail"), state-lost 15 (.ralph/ was deleted during
  the run; the store is written back), interrupted 130 (Ctrl-C; continue
  with ralph resume).

The harness's files are the harness's: an agent's write to phase.txt,
task.md, origin.md, iteration.txt, task-counter.txt or task-history.md is
undone and reported; a task keeps the gates it started with; a change to
ralph.toml, a file a gate runs, or an existing test holds the completion
as [guard] on_change says (ask by default: ralph pending shows the diff).`,
		Example: `  ralph run "add a dark mode toggle to the settings page"
  ralph run --agent claude --max-cost 5 "fix the failing date parser tests"
  ralph run --agent script --script demo.json "build the landing page"`,
		Args: messageArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			if o.worktree {
				return runTaskInWorktree(cmd.Context(), g, &o, args[0])
			}
			return startTask(cmd.Context(), g, &o, args[0])
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.worktree, "worktree", false, "run the task in its own git worktree on branch ralph/task/<N> and land it on the current branch through the merge queue when it completes")
	cmd.Flags().StringVar(&o.plan, "plan", "", "hand in the plan `FILE` (such as .ralph/plan.tsx): validated before the task starts, it opens BUILD at iteration 1")
	return cmd
}

// messageArg wants the task message as ralph run's one argument, and says
// how to quote it when the words came unquoted.
func messageArg(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) > 1:
		return usageError(fmt.Errorf("ralph run takes the task message as one argument; quote it: ralph run %q", strings.Join(args, " ")))
	case len(args) == 0 || strings.TrimSpace(args[0]) == "":
		return usageError(errors.New(`ralph run needs the task message: ralph run "what you want done"`))
	}
	return nil
}

func newResumeCommand(g *Globals) *cobra.Command {
	var o RunOptions
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Continue the interrupted task",
		Long: `Continue the latest task where it stopped: after Ctrl-C, a crash or a kill,
the loop picks up at the next iteration with everything on disk and in the
store as it was. A run killed while its task was starting, even before the
task was recorded, is started or finished as it began. The run's agent and
limits are used unless flags say otherwise. A task that ended is not
restarted; a stopped one only with --force. A ralph run --worktree task
continues in its worktree and lands through the merge queue when it
completes; one that completed but could not land is landed again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return resumeTask(cmd.Context(), g, &o)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.force, "force", false, "continue a task that was stopped or ended by a limit")
	return cmd
}

// startTask runs a new task, message (ralph run). It writes its request
// (.ralph/request.json) before anything else; the task it creates records
// the request's token, so that a run killed before its task reaches the
// store is started by the next ralph resume.
func startTask(ctx context.Context, g *Globals, o *RunOptions, message string) error {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return err
	}
	if o.plan != "" {
		if o.planSrc, err = planreport.HandedIn(ctx, g, o.plan); err != nil {
			return err
		}
	}
	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, err)
	}
	defer lock.Release()
	req, err := newRequest(message, o)
	if err != nil {
		return err
	}
	if err := req.save(ws); err != nil {
		return err
	}
	pausepoint.At(pausepoint.RequestWritten)
	st, err := startRunStore(ctx, g, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	return driveTask(ctx, g, ws, st, cfg, o, message, req.Token, "")
}

// resumeTask continues the latest task (ralph resume): an unlanded ralph
// run --worktree task in its worktree; a request whose token the store
// lacks (its run was killed before the task was recorded) is started;
// otherwise the latest task goes on, with the run's flags unless given
// new ones.
func resumeTask(ctx context.Context, g *Globals, o *RunOptions) error {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return err
	}
	// A resume with no task to continue says so before it writes anything
	// or looks for an agent.
	req := loadRequest(ws)
	if ok, _ := workspace.Exists(ws.Path(workspace.Database)); !ok && req == nil {
		return failure.New(failure.Failed, fmt.Errorf("%w: %w", engine.ErrNothingToResume, store.ErrNoTask))
	}
	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, err)
	}
	defer lock.Release()
	req = loadRequest(ws) // again, now that no run can be writing it
	st, err := startRunStore(ctx, g, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	// An unlanded ralph run --worktree task newer than the last plain run
	// continues in its worktree.
	if rec, err := currentWorktreeTask(ctx, ws, st); err != nil {
		return err
	} else if rec != nil {
		return resumeWorktreeTask(ctx, g, ws, st, cfg, o, rec)
	}
	recorded := int64(0)
	if req != nil {
		if v, ok, _ := st.State(ctx, store.RequestKey(req.Token)); ok {
			recorded, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	var message, note string
	latest, lerr := st.LatestTask(ctx)
	switch {
	case req != nil && recorded == 0 && req.Worktree:
		o.inherit(req.Options)
		target, err := worktree.Target(ctx, ws.Root)
		if err != nil {
			return usageError(fmt.Errorf("--worktree: %w", err))
		}
		fmt.Fprintf(g.Stdout, "ralph run --worktree was stopped before its task was recorded; starting it now: %s\n", progress.OneLine(req.Message, 100))
		return startWorktreeTask(ctx, g, ws, st, cfg, o, req, target)
	case req != nil && recorded == 0:
		// Killed before the task reached the store: start it now.
		message = req.Message
		o.inherit(req.Options)
		note = fmt.Sprintf("ralph run was stopped before its task was recorded; starting it now: %s", progress.OneLine(req.Message, 100))
	case errors.Is(lerr, store.ErrNoTask):
		return failure.New(failure.Failed, fmt.Errorf("%w: %w", engine.ErrNothingToResume, lerr))
	case req != nil && lerr == nil && recorded == latest.ID:
		o.inherit(req.Options)
	default:
		// A task no request describes: the agent the run used.
		if o.agent == (agentFlags{}) {
			if saved, ok, _ := st.State(ctx, keyAgentFlags); ok {
				_ = json.Unmarshal([]byte(saved), &o.agent)
			}
		}
		req = nil
	}
	token := ""
	if req != nil {
		// The next resume continues with what this one was told.
		req.Options = o.requestOptions()
		if err := req.save(ws); err != nil {
			return err
		}
		token = req.Token
	}
	return driveTask(ctx, g, ws, st, cfg, o, message, token, note)
}

// driveTask runs the engine on ws: it starts task message, recorded by the
// request token, or with message "" continues the latest task; note, when
// set, is the run's first progress line. The task's outcome is the error.
func driveTask(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, o *RunOptions, message, token, note string) error {
	opt, err := runEngineOptions(ctx, g, ws, st, cfg, o)
	if err != nil {
		return err
	}
	defer gate.Close(opt.Gates) // ui-renders's browser lives for the run
	start := message != ""
	if start {
		opt.Request, opt.Plan = token, o.planSrc
	}
	rep := newReporter(g.Stdout, o.json)
	defer func() {
		rep.Close()
		if err := rep.Err(); err != nil {
			g.Logger.Warn("the run's progress stopped showing; the run went on", "err", err)
		}
	}()
	opt.Reporter = rep
	// Warnings logged during the run show as its own progress lines.
	defer g.ShowNotices(rep.Notice)()
	defer session.StartNotifier(ctx, g, ws, st, cfg.Notify, opt.Limits.MaxCost)()
	eng := engine.New(ws, st, opt)
	if note != "" {
		rep.Report(engine.Progress{Stage: engine.StageNote, At: time.Now(), Message: note})
	}

	var out engine.Outcome
	if start {
		out, err = eng.Run(ctx, message)
	} else {
		out, err = eng.Resume(ctx, o.force)
	}
	if errors.Is(err, engine.ErrNothingToResume) || errors.Is(err, store.ErrNoTask) {
		return failure.New(failure.Failed, err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return failure.New(engine.Interrupted, fmt.Errorf("interrupted: %w", err))
		}
		return err
	}
	if code := out.Reason.ExitCode(); code != 0 {
		return failure.New(out.Reason, nil)
	}
	return nil
}

func newInitCommand(g *Globals) *cobra.Command {
	var noDetect bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create .ralph/ and a ralph.toml with this project's checks as gates",
		Long: `Set up this git repository for ralph: .ralph/ with its state files and a
.gitignore for ralph's private files (database, lock, logs), and a commented
ralph.toml at the root when there is none. The project's own checks become
its [[gates]]: go.mod gives go build, go vet and go test; package.json its
build, typecheck, lint and test scripts (through npm, pnpm, yarn or bun, by
the lockfile); pyproject.toml or pytest.ini gives pytest; Cargo.toml cargo
test; a Makefile test target make test. An existing ralph.toml without gates
gets them added; one with gates is kept as it is. Safe to run twice.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, _, err := openWorkspace(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := ws.Init(); err != nil {
				return err
			}
			written, err := detect.WriteConfig(ws.Root, !noDetect)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.Stdout, "initialized %s\n%s", ws.StateDir(), written)
			fmt.Fprintf(g.Stdout, "next: ralph run \"what you want done\"\n")
			return nil
		},
	}
	cmd.Flags().BoolVar(&noDetect, "no-detect", false, "do not look for the project's checks; write no gates")
	return cmd
}

func newStopCommand(g *Globals) *cobra.Command {
	var reason string
	var clear bool
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Ask the running loop to stop after its current iteration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if clear {
				return approval.ClearStop(cmd.Context(), g)
			}
			return approval.RequestStop(cmd.Context(), g, reason)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "stopped by the user", "why, recorded with the stop")
	cmd.Flags().BoolVar(&clear, "clear", false, "withdraw a stop request the loop has not acted on yet")
	return cmd
}

// startRunStore initialises ws and opens its store for a run, ending the
// process groups an earlier run left behind. The caller holds ws's lock
// and closes the store.
func startRunStore(ctx context.Context, g *Globals, ws *workspace.Workspace) (*store.Store, error) {
	if err := ws.Init(); err != nil {
		return nil, err
	}
	st, err := session.OpenStore(ctx, ws)
	if err != nil {
		return nil, err
	}
	pausepoint.At(pausepoint.StoreOpened)
	if err := doctor.EndOrphansBeforeRun(ctx, st, g.Stderr); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// runEngineOptions applies o to cfg, builds the agent and its fallbacks,
// records o's agent flags for later resumes and returns the engine options
// with the fallbacks set and the task's agent named as the whole chain
// (claude,codex).
func runEngineOptions(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, o *RunOptions) (engine.Options, error) {
	o.apply(&cfg)
	ag, fallbacks, err := buildAgents(ws, cfg, o.agent, g.Logger)
	if err != nil {
		return engine.Options{}, err
	}
	if b, err := json.Marshal(o.agent); err == nil {
		_ = st.SetState(ctx, keyAgentFlags, string(b))
	}
	opt, err := engineOptions(ctx, g, ws, st, cfg, ag)
	if err != nil {
		return engine.Options{}, err
	}
	opt.YieldAfter = o.yieldAfter
	if len(fallbacks) > 0 {
		opt.Fallbacks = fallbacks
		names := []string{ag.Name()}
		for _, f := range fallbacks {
			names = append(names, f.Name())
		}
		opt.AgentName = strings.Join(names, ",")
	}
	return opt, nil
}

// newReporter shows a run's progress on w (see progress.New).
func newReporter(w io.Writer, asJSON bool) *progress.Reporter { return progress.New(w, asJSON) }
