// Package doctor checks what ralph needs (git, the agent CLIs and their
// credentials, the configured agent) and what a crash can leave behind (a
// held lock, orphaned agent process groups, a damaged store), and ends
// the orphans it finds.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/agent/amp"
	"github.com/ralph-harness/ralph/internal/agent/registry"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/render"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

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
	// Path and Version are an agent CLI's program and the first line of
	// its --version; ConfiguredVia names what gives it credentials
	// (variable names and file paths, never values).
	Path          string   `json:"path,omitempty"`
	Version       string   `json:"version,omitempty"`
	ConfiguredVia []string `json:"configured_via,omitempty"`
	// Agent is the backend the auto and configured checks name.
	Agent string `json:"agent,omitempty"`
}

// doctorEnv is what checks look at. ws and cfg are nil and zero outside a
// ralph workspace; st is nil when no run has created the database.
type doctorEnv struct {
	ws  *workspace.Workspace
	cfg config.Config
	st  *store.Store
	// storeErr is why the database would not open.
	storeErr error
	logger   *slog.Logger
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
	{"auto", checkAuto},
	{"agent", checkConfigured},
	{"lock", checkLock},
	{"orphans", checkOrphans},
	{"store", checkStore},
	{"notify", checkNotify},
	{"browser", checkBrowser},
	{"sandbox", checkSandbox},
}

// Run runs every check and prints the findings to g.Stdout, as JSON with
// asJSON. A failed check is a failure.Failed error naming it.
func Run(ctx context.Context, g *session.Globals, asJSON bool) error {
	env := &doctorEnv{logger: g.Logger}
	if env.logger == nil {
		env.logger = slog.New(slog.DiscardHandler)
	}
	if ws, cfg, err := session.OpenWorkspace(ctx, g); err == nil {
		env.ws, env.cfg = ws, cfg
		if ok, _ := workspace.Exists(ws.Path(workspace.Database)); ok {
			// A damaged database is one failed check among the others,
			// not a reason to check nothing.
			if st, err := store.Open(ctx, ws.Path(workspace.Database)); err != nil {
				env.storeErr = err
			} else {
				defer st.Close()
				env.st = st
			}
		}
	} else {
		env.cfg = config.Default()
	}
	agentEnv := map[string][]string{}
	for name, b := range env.cfg.Agents {
		agentEnv[name] = b.Env
	}
	secrets := secretValues(agentEnv)
	var all []finding
	for _, c := range doctorChecks {
		for _, f := range c.run(ctx, env) {
			if f.Check == "" {
				f.Check = c.name
			}
			f.Message, f.Path, f.Version = redact(f.Message, secrets), redact(f.Path, secrets), redact(f.Version, secrets)
			all = append(all, f)
		}
	}
	if asJSON {
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
			return failure.New(failure.Failed, errors.New("doctor: "+f.Check+": "+f.Message))
		}
	}
	return nil
}

func checkGit(ctx context.Context, _ *doctorEnv) []finding {
	path, err := exec.LookPath("git")
	if err != nil {
		return []finding{{Status: findingFail, Message: "git is not on PATH; ralph needs it for snapshots"}}
	}
	out, err := git.Line(ctx, os.TempDir(), "--version")
	if err != nil {
		return []finding{{Status: findingFail, Message: fmt.Sprintf("%s --version: %v", path, err)}}
	}
	return []finding{{Status: findingOK, Message: out + " (" + path + ")"}}
}

// checkBrowser says which browser the ui-renders gate would load the app
// in: [gates.ui] browser, else the first Chromium or Chrome on PATH.
// None is information, or a failure when [gates.ui] required is set.
func checkBrowser(ctx context.Context, env *doctorEnv) []finding {
	configured, required := "", false
	if u := env.cfg.UI; u != nil {
		if u.Off {
			return []finding{{Status: findingInfo, Message: "ui-renders is off ([gates.ui] off = true)"}}
		}
		configured, required = u.Browser, u.Required
	}
	path, err := render.Find(configured)
	if err != nil {
		f := finding{Status: findingInfo, Message: errorText(err) + ": ui-renders skips; install Chromium (scripts/install-chromium.sh, apt-get install chromium) or set [gates.ui] browser = \"/path/to/chrome\""}
		if required {
			f.Status = findingFail
		}
		return []finding{f}
	}
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(vctx, path, "--version").Output()
	version := strings.TrimSpace(string(out))
	if err != nil || version == "" {
		return []finding{{Status: findingWarn, Path: path, Message: fmt.Sprintf("%s --version did not answer (%v): ui-renders may fail to start it", path, err)}}
	}
	return []finding{{Status: findingOK, Path: path, Version: version, Message: fmt.Sprintf("%s (%s): ui-renders loads the app in it", version, path)}}
}

func checkAgents(ctx context.Context, env *doctorEnv) []finding {
	// The configured agent, or every agent of a fallback chain.
	chosen := map[string]bool{}
	for _, n := range strings.Split(string(env.cfg.Agent), ",") {
		chosen[strings.TrimSpace(n)] = true
	}
	out := make([]finding, len(registry.CLIs))
	var wg sync.WaitGroup
	for i, b := range registry.CLIs {
		backend := env.cfg.Agents[b.Name]
		bin := backend.Binary
		if bin == "" {
			bin = b.Binary
		}
		f := &out[i]
		f.Check = "agent " + b.Name
		path, err := exec.LookPath(bin)
		if err != nil {
			f.Status, f.Message = findingInfo, bin+" not on PATH (install: "+b.Hint+")"
			if chosen[b.Name] {
				f.Status = findingFail
			}
			if b.Name == amp.Name {
				f.Message += "; " + amp.Caveat
			}
			continue
		}
		f.Path = path
		f.ConfiguredVia = credentialSources(b.Name, backend.Env)
		wg.Go(func() {
			version, verr := agentVersion(ctx, path, backend.Env)
			f.Version = version
			parts := []string{path}
			if verr != nil {
				parts = append(parts, "version unknown ("+verr.Error()+")")
			} else {
				parts = append(parts, version)
			}
			f.Status = findingOK
			if len(f.ConfiguredVia) > 0 {
				parts = append(parts, "configured via "+strings.Join(f.ConfiguredVia, ", "))
			} else {
				f.Status = findingWarn
				parts = append(parts, "no credentials found ("+credentialHint(b.Name)+")")
			}
			if b.Name == amp.Name {
				parts = append(parts, amp.Caveat)
			}
			f.Message = strings.Join(parts, "; ")
		})
	}
	wg.Wait()
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

// doctorWorkspace is the workspace the agent builders get: the real one,
// or the current directory outside a workspace (only the command and
// script agents use it, and only to name log and script paths).
func doctorWorkspace(env *doctorEnv) *workspace.Workspace {
	if env.ws != nil {
		return env.ws
	}
	return &workspace.Workspace{Root: "."}
}

// checkAuto says which agent --agent auto would pick, by asking the very
// code ralph run uses (buildAgent).
func checkAuto(_ context.Context, env *doctorEnv) []finding {
	ag, err := registry.Build(doctorWorkspace(env), env.cfg, registry.Flags{Name: "auto"}, env.logger)
	if err != nil {
		// Informational: the agent check fails when auto is configured.
		return []finding{{Status: findingInfo, Message: "would pick nothing: " + errorText(err)}}
	}
	f := finding{Status: findingOK, Agent: ag.Name(), Message: "would pick " + ag.Name()}
	if noCredentials(env.cfg, ag.Name()) {
		f.Status, f.Message = findingWarn, f.Message+", which has no credentials (see agent "+ag.Name()+")"
	}
	return []finding{f}
}

// noCredentials reports whether name is an agent CLI that needs
// credentials and none were found for it.
func noCredentials(cfg config.Config, name string) bool {
	if _, ok := agentCredentials[name]; !ok {
		return false
	}
	return len(credentialSources(name, cfg.Agents[name].Env)) == 0
}

// checkConfigured says whether the configured agent can run: each agent
// of a fallback chain is built as ralph run would build it.
func checkConfigured(_ context.Context, env *doctorEnv) []finding {
	configured := strings.TrimSpace(string(env.cfg.Agent))
	if configured == "" {
		configured = "auto"
	}
	var names []string
	for _, n := range strings.Split(configured, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	label := "agent = " + configured
	if env.ws == nil {
		label += " (the default outside a workspace)"
	}
	var runnable, bare []string
	for _, n := range names {
		if n == "script" {
			// The script agent needs --script FILE, which only ralph run
			// is given.
			runnable = append(runnable, "script (with --script FILE)")
			continue
		}
		ag, err := registry.Build(doctorWorkspace(env), env.cfg, registry.Flags{Name: n}, env.logger)
		if err != nil {
			return []finding{{Status: findingFail, Agent: n, Message: label + ": " + n + " cannot run: " + errorText(err)}}
		}
		if n == "auto" {
			runnable = append(runnable, "auto ("+ag.Name()+")")
		} else {
			runnable = append(runnable, ag.Name())
		}
		if noCredentials(env.cfg, ag.Name()) {
			bare = append(bare, ag.Name())
		}
	}
	f := finding{Status: findingOK, Message: label + ": can run " + strings.Join(runnable, ", then ")}
	if len(bare) > 0 {
		// It starts, but the CLI will ask for a login it cannot get.
		f.Status = findingWarn
		f.Message += "; no credentials found for " + strings.Join(bare, ", ") + " (see its line above)"
	}
	if len(names) > 0 {
		f.Agent = names[0]
	}
	return []finding{f}
}

// errorText is err's message on one line.
func errorText(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
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
	if note := proc.OrphanSupport(); note != "" {
		return []finding{{Status: findingInfo, Message: note}}
	}
	if env.st == nil {
		return []finding{{Status: findingOK, Message: "none (no run has recorded any process)"}}
	}
	ended, err := EndOrphans(ctx, env.st)
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
	if env.storeErr != nil {
		return []finding{{Status: findingFail, Message: env.storeErr.Error() + " — move .ralph/ralph.db aside to start a new history (snapshots in git are kept)"}}
	}
	if env.st == nil {
		return []finding{{Status: findingInfo, Message: "no database yet"}}
	}
	if err := env.st.IntegrityCheck(ctx); err != nil {
		return []finding{{Status: findingFail, Message: err.Error()}}
	}
	return []finding{{Status: findingOK, Message: "integrity_check ok (" + env.ws.Path(workspace.Database) + ")"}}
}
