package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/ralph-harness/ralph/internal/agent/amp"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// DoctorOptions are the flags of ralph doctor.
type DoctorOptions struct {
	json bool
}

// AddFlags registers the flags on cmd.
func (o *DoctorOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as a JSON array")
}

// Finding statuses: a failure makes ralph doctor exit 1; fixed means
// doctor repaired something (ended an orphaned process group).
const (
	findingOK    = "ok"
	findingInfo  = "info"
	findingWarn  = "warn"
	findingFail  = "fail"
	findingFixed = "fixed"
)

// finding is one line of ralph doctor's report.
type finding struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// doctorEnv is what checks look at. ws and cfg are nil and zero outside a
// ralph workspace; st is nil when no run has created the database.
type doctorEnv struct {
	ws  *workspace.Workspace
	cfg config.Config
	st  *store.Store
}

// doctorCheck is one thing ralph doctor checks; add new ones to
// doctorChecks.
type doctorCheck struct {
	name string
	run  func(ctx context.Context, env *doctorEnv) []finding
}

// doctorChecks are run in order.
var doctorChecks = []doctorCheck{
	{"git", checkGit},
	{"agents", checkAgents},
	{"lock", checkLock},
	{"orphans", checkOrphans},
	{"store", checkStore},
}

func newDoctorCommand(g *Globals) *cobra.Command {
	var o DoctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check ralph's setup and end agent processes a dead ralph left running",
		Long: `Check what ralph needs and what a crash can leave behind:
  git       git is installed
  agents    which agent CLIs are on PATH (the configured one must be)
  lock      which ralph process, if any, drives this workspace
  orphans   agent process groups a ralph that died (kill -9, OOM) left
            running: each is ended (SIGTERM, then SIGKILL) with one line
  store     the database passes SQLite's integrity check

Exits 1 when a check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), g, &o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runDoctor(ctx context.Context, g *Globals, o *DoctorOptions) error {
	env := &doctorEnv{}
	if ws, cfg, err := openWorkspace(ctx, g); err == nil {
		env.ws, env.cfg = ws, cfg
		if ok, _ := workspace.Exists(ws.Path(workspace.Database)); ok {
			st, err := store.Open(ctx, ws.Path(workspace.Database))
			if err != nil {
				return err
			}
			defer st.Close()
			env.st = st
		}
	} else {
		env.cfg = config.Default()
	}
	var all []finding
	for _, c := range doctorChecks {
		for _, f := range c.run(ctx, env) {
			if f.Check == "" {
				f.Check = c.name
			}
			all = append(all, f)
		}
	}
	if o.json {
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return err
		}
	} else {
		width := 0
		for _, f := range all {
			width = max(width, len(f.Check))
		}
		for _, f := range all {
			fmt.Fprintf(g.Stdout, "%-5s  %-*s  %s\n", f.Status, width, f.Check, f.Message)
		}
	}
	for _, f := range all {
		if f.Status == findingFail {
			return &ExitError{Code: 1}
		}
	}
	return nil
}

func checkGit(ctx context.Context, _ *doctorEnv) []finding {
	path, err := exec.LookPath("git")
	if err != nil {
		return []finding{{Status: findingFail, Message: "git is not on PATH; ralph needs it for snapshots"}}
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return []finding{{Status: findingFail, Message: fmt.Sprintf("%s --version: %v", path, err)}}
	}
	return []finding{{Status: findingOK, Message: strings.TrimSpace(string(out)) + " (" + path + ")"}}
}

func checkAgents(_ context.Context, env *doctorEnv) []finding {
	// The configured agent, or every agent of a fallback chain.
	chosen := map[string]bool{}
	for _, n := range strings.Split(string(env.cfg.Agent), ",") {
		chosen[strings.TrimSpace(n)] = true
	}
	var out []finding
	for _, b := range cliBackends {
		bin := env.cfg.Agents[b.name].Binary
		if bin == "" {
			bin = b.binary
		}
		f := finding{Check: "agent " + b.name}
		if path, err := exec.LookPath(bin); err == nil {
			f.Status, f.Message = findingOK, path
		} else {
			f.Status, f.Message = findingInfo, bin+" not on PATH (install: "+b.hint+")"
			if chosen[b.name] {
				f.Status = findingFail
			}
		}
		if b.name == amp.Name {
			f.Message += "; " + amp.Caveat
		}
		out = append(out, f)
	}
	if argv := env.cfg.Agents["command"].Command; len(argv) > 0 {
		f := finding{Check: "agent command"}
		if path, err := exec.LookPath(argv[0]); err == nil {
			f.Status, f.Message = findingOK, path
		} else {
			f.Status, f.Message = findingWarn, argv[0]+" ([agents.command] command) not on PATH"
			if chosen["command"] {
				f.Status = findingFail
			}
		}
		out = append(out, f)
	}
	return out
}

func checkLock(_ context.Context, env *doctorEnv) []finding {
	if env.ws == nil {
		return []finding{{Status: findingInfo, Message: "not in a ralph workspace"}}
	}
	if pid := env.ws.HolderPID(); pid != 0 {
		return []finding{{Status: findingInfo, Message: fmt.Sprintf("held by ralph pid %d", pid)}}
	}
	return []finding{{Status: findingOK, Message: "free: no ralph drives this workspace"}}
}

func checkOrphans(ctx context.Context, env *doctorEnv) []finding {
	if env.st == nil {
		return []finding{{Status: findingOK, Message: "none (no run has recorded any process)"}}
	}
	ended, err := endOrphans(ctx, env.st)
	if err != nil {
		return []finding{{Status: findingFail, Message: err.Error()}}
	}
	if len(ended) == 0 {
		return []finding{{Status: findingOK, Message: "none"}}
	}
	out := make([]finding, len(ended))
	for i, o := range ended {
		out[i] = finding{Status: findingFixed, Message: o.String()}
		if !o.Ended {
			out[i].Status = findingFail
		}
	}
	return out
}

func checkStore(ctx context.Context, env *doctorEnv) []finding {
	if env.st == nil {
		return []finding{{Status: findingInfo, Message: "no database yet"}}
	}
	if err := env.st.IntegrityCheck(ctx); err != nil {
		return []finding{{Status: findingFail, Message: err.Error()}}
	}
	return []finding{{Status: findingOK, Message: "integrity_check ok (" + env.ws.Path(workspace.Database) + ")"}}
}
