// Package cli holds ralph's command tree: one file per command, each with a
// constructor that wires flags to an options struct and a run function that
// takes a context first. Main maps errors to exit codes in one place.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/session"
)

// Globals carries what every command needs (see session.Globals).
type Globals = session.Globals

// ExitError is how a failed command ends ralph: its exit code, and the
// error to print (nil when the command has already printed what the user
// needs to see).
type ExitError struct {
	Code int
	Err  error
}

// exitError is the one place where errors become exit codes: a failure's
// reason chooses the code (the engine's reasons keep the codes the
// engine gives them), a run elsewhere passes its own code on, and any
// other error is a usage or internal error, 2.
func exitError(err error) *ExitError {
	code, shown := 2, err
	var f *failure.Error
	var x *failure.Exited
	switch {
	case errors.As(err, &x):
		code, shown = x.Code, nil
	case errors.As(err, &f):
		shown = f.Err
		switch f.Reason {
		case failure.Failed:
			code = 1
		case failure.Usage:
			code = 2
		case failure.NotLanded:
			code = 12
		default:
			code = engine.Reason(f.Reason).ExitCode()
		}
	}
	return &ExitError{Code: code, Err: shown}
}

// Main runs ralph with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A closed pipe (ralph run | head) must not end a run: with SIGPIPE
	// caught, a write to it fails with EPIPE instead, and the progress
	// reporter stops printing. Programs ralph starts get the default
	// disposition back on exec.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	return run(ctx, args, stdin, stdout, stderr)
}

// run is Main under ctx, which a signal cancels.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &Globals{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: "."}
	root := newRootCommand(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	_ = g.Close()
	if err == nil {
		return 0
	}
	ee := exitError(err)
	if ctx.Err() != nil && ee.Code == 2 {
		// A signal cut the command short (while it started up, say): an
		// interruption, not a usage error.
		ee = interrupted(err)
	}
	if ee.Err != nil {
		fmt.Fprintf(stderr, "ralph: %v\n", ee.Err)
	}
	return ee.Code
}

// interrupted is how a command that a signal cut short ends: exit 130, as
// an interrupted run does.
func interrupted(err error) *ExitError {
	return exitError(failure.New(engine.Interrupted, fmt.Errorf("interrupted (%v); nothing was lost — run it again, or ralph resume", err)))
}

func newRootCommand(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "ralph",
		Short: "Run coding agents in loops until the work is verifiably done",
		Long: `ralph runs a coding agent (Claude Code, Codex, opencode, Gemini CLI, Qwen
Code, GitHub Copilot CLI, Amp, its own API agent, any command, or a scripted
stand-in) in a loop of fresh-context iterations until the harness — not
the agent — decides the work is done: the plan validates, the quality gates
pass.

Start with:
  ralph demo              the whole lifecycle offline, in a temporary repo
  ralph init              set up .ralph/ and ralph.toml in your repository
  ralph run "message"     run a task`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			g.StartLog()
		},
	}
	root.PersistentFlags().StringVarP(&g.Dir, "dir", "C", ".", "work in `DIR` instead of the current directory")
	root.PersistentFlags().BoolVarP(&g.Verbose, "verbose", "v", false, "also log to stderr, with debug detail (the log is always in .ralph/logs/ralph.log)")
	root.AddCommand(
		newInitCommand(g),
		newRunCommand(g),
		newResumeCommand(g),
		newStatusCommand(g),
		newLogCommand(g),
		newStopCommand(g),
		newPendingCommand(g),
		newApproveCommand(g),
		newRejectCommand(g),
		newDemoCommand(g),
		newPlanCommand(g),
		newSnapshotCommand(g),
		newVersionCommand(g),
		newThemeCommand(g),
		newRecipeCommand(g),
		newSpecsCommand(g),
		newServeCommand(g), newPreviewCommand(g),
		newDoctorCommand(g),
		newNotifyCommand(g),
	)
	addTemporal(g, root)
	root.Version = version()
	root.SetVersionTemplate("ralph {{.Version}}\n")
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// (ralph specs, ralph plan, …) refuse an unknown subcommand as a usage
// error (exit 2) instead of printing its help and exiting 0; with no
// subcommand it still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return failure.New(failure.Usage, fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath()))
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
}
