package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent/amp"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/agent/codex"
	"github.com/ralph-harness/ralph/internal/agent/copilot"
	"github.com/ralph-harness/ralph/internal/agent/gemini"
	"github.com/ralph-harness/ralph/internal/agent/opencode"
	"github.com/ralph-harness/ralph/internal/agent/qwen"
	"github.com/ralph-harness/ralph/internal/proc"
)

// versionTimeout bounds `BINARY --version` in ralph doctor.
const versionTimeout = 15 * time.Second

// credEnv is an environment variable an agent CLI reads its credentials
// (or the choice of a provider that has its own) from. valid, when set,
// says whether a value really configures the CLI (OPENCODE_CONFIG_CONTENT
// must name a provider); otherwise any non-empty value does.
type credEnv struct {
	name  string
	valid func(value string) bool
}

// credFile is a file an agent CLI keeps a login in: dir is the directory
// (the variable dirEnv names when it is set, else sub under $HOME), and
// valid, when set, checks the parsed JSON (a settings file configures
// the CLI only when it holds a key).
type credFile struct {
	dirEnv, sub, name string
	valid             func(doc map[string]any) bool
}

// credentials is what one agent CLI accepts as credentials: any of env
// set, or any of files present, configures it; login says how to sign in.
type credentials struct {
	env   []credEnv
	files []credFile
	login string
}

// agentCredentials are the credentials each agent CLI documents (in its
// --help, `copilot help environment`, or where its bundle reads them),
// keyed by backend name. Only names are ever printed, never values.
var agentCredentials = map[string]credentials{
	claude.Name: {
		env: envNames("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
			"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"),
		files: []credFile{{dirEnv: "CLAUDE_CONFIG_DIR", sub: ".claude", name: ".credentials.json"}},
		login: "run `claude auth login`",
	},
	codex.Name: {
		env:   envNames("OPENAI_API_KEY", "CODEX_API_KEY"),
		files: []credFile{{dirEnv: "CODEX_HOME", sub: ".codex", name: "auth.json"}},
		login: "run `codex login`",
	},
	opencode.Name: {
		env: append([]credEnv{
			{name: "OPENCODE_CONFIG_CONTENT", valid: func(v string) bool { return jsonHas([]byte(v), "provider") }},
			{name: "OPENCODE_CONFIG", valid: func(v string) bool {
				data, err := os.ReadFile(v)
				return err == nil && jsonHas(data, "provider")
			}},
		}, envNames("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY")...),
		files: []credFile{{dirEnv: "XDG_DATA_HOME", sub: ".local/share", name: "opencode/auth.json"}},
		login: "run `opencode auth login`",
	},
	gemini.Name: {
		env: append(envNames("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"),
			credEnv{name: "GOOGLE_GENAI_USE_VERTEXAI", valid: func(v string) bool { return strings.EqualFold(v, "true") || v == "1" }}),
		files: []credFile{{dirEnv: "GEMINI_CLI_HOME", sub: "", name: ".gemini/oauth_creds.json"}},
		login: "run `gemini` once to sign in with Google",
	},
	qwen.Name: {
		env: envNames("OPENAI_API_KEY", "DASHSCOPE_API_KEY"),
		files: []credFile{
			{dirEnv: "QWEN_HOME", sub: ".qwen", name: "oauth_creds.json"},
			{dirEnv: "QWEN_HOME", sub: ".qwen", name: "settings.json", valid: func(doc map[string]any) bool {
				return jsonPath(doc, "security", "auth", "apiKey") || jsonPath(doc, "security", "auth", "selectedType")
			}},
		},
		login: "run `qwen` once to sign in",
	},
	copilot.Name: {
		env:   envNames("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_BASE_URL"),
		login: "run `copilot` and /login; a stored login is not checked",
	},
	amp.Name: {
		env:   envNames("AMP_API_KEY"),
		files: []credFile{{dirEnv: "XDG_DATA_HOME", sub: ".local/share", name: "amp/secrets.json"}},
		login: "run `amp login`",
	},
}

func envNames(names ...string) []credEnv {
	out := make([]credEnv, len(names))
	for i, n := range names {
		out[i] = credEnv{name: n}
	}
	return out
}

// jsonHas reports whether data is a JSON object with a non-empty key.
func jsonHas(data []byte, key string) bool {
	var doc map[string]any
	return json.Unmarshal(data, &doc) == nil && jsonPath(doc, key)
}

// jsonPath reports whether doc holds a non-empty value at path.
func jsonPath(doc map[string]any, path ...string) bool {
	var v any = doc
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// lookupEnv finds a variable in the backend's [agents.NAME] env (which
// the agent gets on top of ralph's environment), then in ralph's own.
// fromConfig says where it was found.
func lookupEnv(cfgEnv []string, name string) (value string, fromConfig bool) {
	for i := len(cfgEnv) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(cfgEnv[i], "="); ok && k == name {
			return v, true
		}
	}
	return os.Getenv(name), false
}

// credentialSources returns what configures backend name, names and
// paths only: "ANTHROPIC_API_KEY", "OPENAI_API_KEY ([agents.codex] env)",
// "~/.codex/auth.json". cfgEnv is its [agents.NAME] env.
func credentialSources(name string, cfgEnv []string) []string {
	c := agentCredentials[name]
	var out []string
	for _, e := range c.env {
		v, fromConfig := lookupEnv(cfgEnv, e.name)
		if v == "" || (e.valid != nil && !e.valid(v)) {
			continue
		}
		if fromConfig {
			out = append(out, e.name+" ([agents."+name+"] env)")
		} else {
			out = append(out, e.name)
		}
	}
	home, _ := os.UserHomeDir()
	for _, f := range c.files {
		dir, _ := lookupEnv(cfgEnv, f.dirEnv)
		if dir == "" {
			if home == "" {
				continue
			}
			dir = filepath.Join(home, f.sub)
		}
		path := filepath.Join(dir, f.name)
		data, err := os.ReadFile(path)
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		if f.valid != nil {
			var doc map[string]any
			if json.Unmarshal(data, &doc) != nil || !f.valid(doc) {
				continue
			}
		}
		if home != "" {
			if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
				path = "~/" + filepath.ToSlash(rel)
			}
		}
		out = append(out, path)
	}
	return out
}

// credentialHint says what would configure backend name, for the "no
// credentials found" message: "set ANTHROPIC_API_KEY, … or run `claude
// auth login`".
func credentialHint(name string) string {
	c := agentCredentials[name]
	var names []string
	for _, e := range c.env {
		names = append(names, e.name)
	}
	hint := ""
	switch len(names) {
	case 0:
	case 1:
		hint = "set " + names[0]
	default:
		hint = "set " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	if c.login != "" {
		if hint != "" {
			hint += ", or "
		}
		hint += c.login
	}
	return hint
}

// agentVersion runs `path --version` (argv, no shell, within
// versionTimeout) and returns the first non-empty line of its output.
func agentVersion(ctx context.Context, path string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	var first string
	res, err := proc.Run(ctx, proc.Spec{
		Argv: []string{path, "--version"},
		Env:  env,
		OnLine: func(line string) {
			if first == "" {
				first = strings.TrimSpace(line)
			}
		},
		KillGrace: 500 * time.Millisecond,
	})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", fmt.Errorf("--version gave no answer within %s", versionTimeout)
	case err != nil:
		return "", errors.New("--version could not run")
	case res.ExitCode != 0:
		return "", fmt.Errorf("--version exited with status %d", res.ExitCode)
	case first == "":
		return "", errors.New("--version printed nothing")
	}
	return first, nil
}

// secretValues are the values of every credential variable ralph doctor
// looks at, from the environment and from ralph.toml's [agents.NAME]
// env, longest first: output that contains one has it replaced, so that
// not even an agent CLI that echoes its key in --version leaks it.
func secretValues(agents map[string][]string) []string {
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= 8 {
			seen[v] = true
		}
	}
	for _, c := range agentCredentials {
		for _, e := range c.env {
			add(os.Getenv(e.name))
		}
	}
	for _, env := range agents {
		for _, kv := range env {
			if _, v, ok := strings.Cut(kv, "="); ok {
				add(v)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redact replaces every secret value in s.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}
