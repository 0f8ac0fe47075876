package config

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadMissingIsDefault(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.MaxIterations != 20 || cfg.Promise != DefaultPromise || cfg.Limits.GateFailures != 5 {
		t.Errorf("defaults = %+v", cfg.Limits)
	}
}

func TestTemplateLoads(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(Template), 0o644)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.IdleTimeout.Duration != 10*time.Minute {
		t.Errorf("idle timeout = %v", cfg.Limits.IdleTimeout)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"syntax", "agent = \n", "ralph.toml:1"},
		{"unknown key", "agnet = \"claude\"\n", `unknown setting "agnet"`},
		{"bad duration", "[limits]\nidle_timeout = \"ten\"\n", "invalid duration"},
		{"gate without run", "[[gates]]\nname = \"t\"\n", `gate "t" has no run`},
		{"empty agent list", "agent = []\n", "the list of agents is empty"},
		{"agent list of numbers", "agent = [1]\n", "want a list of agent names"},
		{"sandbox mode", "[sandbox]\nmode = \"strict\"\n", `[sandbox] mode = "strict" (want workspace or off)`},
		{"sandbox network", "[sandbox]\nnetwork = \"none\"\n", `[sandbox] network = "none" (want open or model)`},
		{"sandbox relative path", "[sandbox]\nwrite = [\"cache\"]\n", `[sandbox] write = "cache": give an absolute path or one in ~/`},
		{"sandbox required but off", "[sandbox]\nmode = \"off\"\nrequired = true\n", "required = true contradicts mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, FileName), []byte(tt.body), 0o644)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSpecsSettings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("[specs]\nmax_attempts = 5\nbackoff = \"0s\"\npass_promise = \"OK\"\n"), 0o644)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Specs
	if s.MaxAttempts != 5 || s.Backoff.Duration != 0 || s.PassPromise != "OK" || s.FailPromise != DefaultFailPromise || s.Dir != "specs" {
		t.Errorf("specs = %+v", s)
	}
	if s.Parallel != 1 {
		t.Errorf("parallel defaults to %d, want 1", s.Parallel)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("[specs]\nmax_attempts = 0\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "max_attempts") {
		t.Errorf("max_attempts = 0: err = %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("[specs]\nparallel = 3\n"), 0o644)
	if cfg, err := Load(dir); err != nil || cfg.Specs.Parallel != 3 {
		t.Errorf("parallel = 3: %d, %v", cfg.Specs.Parallel, err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("[specs]\nparallel = 0\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "parallel") {
		t.Errorf("parallel = 0: err = %v", err)
	}
}

// agent is a name or a fallback chain written as a list.
func TestAgentChain(t *testing.T) {
	for body, want := range map[string]AgentChoice{
		`agent = "codex"`:                       "codex",
		`agent = ["claude", "codex", "gemini"]`: "claude,codex,gemini",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, FileName), []byte(body+"\n"), 0o644)
		cfg, err := Load(dir)
		if err != nil || cfg.Agent != want {
			t.Errorf("%s: agent = %q (%v), want %q", body, cfg.Agent, err, want)
		}
	}
}

func TestBuildGateSettings(t *testing.T) {
	tests := []struct {
		name, body string
		want       *BuildGate
		gates      int
	}{
		{"none", "[[gates]]\nname = \"t\"\nrun = [\"go\", \"test\"]\n", nil, 1},
		{"table alone", "[gates.build]\nentry = \"web/main.tsx\"\nmissing = \"fail\"\n",
			&BuildGate{Entry: "web/main.tsx", Missing: "fail"}, 0},
		{"after command gates", "[[gates]]\nname = \"t\"\nrun = [\"go\", \"test\"]\n\n[[gates]]\nname = \"l\"\nrun = [\"lint\"]\n\n[gates.build]\nuse = \"npm\"\ntimeout = \"2m\"\n",
			&BuildGate{Use: "npm", Timeout: Duration{2 * time.Minute}}, 2},
		{"inline", "[gates]\nbuild = { use = \"off\" }\n", &BuildGate{Use: "off"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, FileName), []byte(tt.body), 0o644)
			cfg, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Gates) != tt.gates {
				t.Errorf("command gates = %+v, want %d", cfg.Gates, tt.gates)
			}
			if (cfg.Build == nil) != (tt.want == nil) || (cfg.Build != nil && *cfg.Build != *tt.want) {
				t.Errorf("build = %+v, want %+v", cfg.Build, tt.want)
			}
		})
	}
}

func TestBuildGateErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"bad use", "[gates.build]\nuse = \"make\"\n", `use = "make" (want esbuild, npm or off)`},
		{"bad missing", "[gates.build]\nmissing = \"maybe\"\n", `missing = "maybe"`},
		{"unknown key", "[gates.build]\nentyr = \"x\"\n", `unknown setting "gates.build.entyr"`},
		{"command gate as a table", "[gates.lint]\nrun = [\"lint\"]\n", `command gates are [[gates]] entries`},
		{"build before command gates", "[gates.build]\nuse = \"npm\"\n\n[[gates]]\nname = \"t\"\nrun = [\"x\"]\n", "ralph.toml:4: "},
		{"build before command gates hint", "[gates.build]\nuse = \"npm\"\n\n[[gates]]\nname = \"t\"\nrun = [\"x\"]\n", "write the [[gates]] entries before [gates.build]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, FileName), []byte(tt.body), 0o644)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTemplateBuildGateUncommented: the [gates.build] block that ralph init
// writes, uncommented, is a valid configuration.
func TestTemplateBuildGateUncommented(t *testing.T) {
	var out []string
	in := false
	for _, line := range strings.Split(Template, "\n") {
		switch {
		case line == "# [gates.build]":
			in = true
			line = "[gates.build]"
		case in && line == "":
			in = false
		case in && strings.HasPrefix(line, "# ") && strings.Contains(line, " = "):
			line = strings.TrimPrefix(line, "# ")
		}
		out = append(out, line)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Join(out, "\n")), 0o644)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := BuildGate{Use: "esbuild", Entry: "src/main.tsx", Missing: "warn", Tsconfig: "tsconfig.app.json", Timeout: Duration{5 * time.Minute}}
	if cfg.Build == nil || *cfg.Build != want {
		t.Errorf("build = %+v, want %+v", cfg.Build, want)
	}
}

// A gate written as a shell string is refused with what to write instead,
// not the decoder's type error.
func TestGateAsShellString(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("[[gates]]\nname = \"test\"\nrun = \"go test ./...\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || err.Error() != `ralph.toml:3: a gate's run is an argv list, never a shell string: write run = ["go", "test", "./..."]` {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckBounds(t *testing.T) {
	for _, tc := range []struct {
		b    Bound
		want string
	}{
		{Int("--max-iterations", 0), ""},
		{Int("--max-iterations", 3), ""},
		{Int("--max-iterations", -1), "--max-iterations must not be negative (0 means the default or no limit)"},
		{Float("--max-cost", math.NaN()), "--max-cost must be a finite number"},
		{Float("--max-cost", math.Inf(1)), "--max-cost must be a finite number"},
		{Dur("[limits] max_wait", -time.Second), "[limits] max_wait must not be negative (0 means the default or no limit)"},
		{AtLeastOne("--parallel", 0), "--parallel must be at least 1"},
		{AtLeastOne("--parallel", 1), ""},
	} {
		got := ""
		if err := CheckBounds(tc.b); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s = %v: %q, want %q", tc.b.Name, tc.b.Value, got, tc.want)
		}
	}
}

func TestSandboxSettings(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.Mode != "workspace" || cfg.Sandbox.Network != "open" || cfg.Sandbox.Required {
		t.Errorf("default sandbox = %+v, want workspace, open, not required", cfg.Sandbox)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("[sandbox]\nread = [\"~/go/pkg/mod\", \"/opt/sdk\"]\nwrite = [\"~/.cache/go-build\"]\nnetwork = \"model\"\nrequired = true\n"), 0o644)
	if cfg, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	s := cfg.Sandbox
	if s.Mode != "workspace" || s.Network != "model" || !s.Required || len(s.Read) != 2 || s.Write[0] != "~/.cache/go-build" {
		t.Errorf("sandbox = %+v", s)
	}
}

func TestNotify(t *testing.T) {
	tests := []struct {
		name, toml, err string
		want            Notify
	}{
		{name: "command list", toml: `notify = ["notify-send", "ralph"]`, want: Notify{Command: []string{"notify-send", "ralph"}}},
		{name: "table", toml: "[notify]\ncommand = [\"x\"]\ndashboard_url = \"http://box:8080\"\n[notify.telegram]\nchat_id = -100\nallow = [42]\nbase_url = \"http://127.0.0.1:9\"\nevents = [\"human\", \"end\"]\n",
			want: Notify{Command: []string{"x"}, DashboardURL: "http://box:8080", Telegram: &Telegram{ChatID: -100, Allow: []int64{42}, BaseURL: "http://127.0.0.1:9", Events: []string{"human", "end"}}}},
		{name: "no chat", toml: "[notify.telegram]\nallow = [1]\n", err: "[notify.telegram] needs chat_id"},
		{name: "token in config", toml: "[notify.telegram]\nchat_id = 1\ntoken_env = \"123:ABC=x\"\n", err: "names an environment variable"},
		{name: "unknown event", toml: "[notify.webhook]\nurl = \"https://h.example/x\"\nevents = [\"lunch\"]\n", err: `unknown event "lunch"`},
		{name: "bad url", toml: "[notify.ntfy]\ntopic = \"t\"\nurl = \"ftp://x\"\n", err: "is not an http(s) URL"},
		{name: "unknown key", toml: "[notify.telegram]\nchat_id = 1\ntoken = \"123:ABC\"\n", err: `unknown setting "notify.telegram.token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(tt.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Notify); diff != "" {
				t.Errorf("Notify (-want +got):\n%s", diff)
			}
		})
	}
}
