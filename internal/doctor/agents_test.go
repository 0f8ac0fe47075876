package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/registry"
)

func TestCredentialSources(t *testing.T) {
	for _, v := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "DASHSCOPE_API_KEY",
		"OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT", "CODEX_HOME", "QWEN_HOME", "XDG_DATA_HOME",
		"GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "OPENROUTER_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"} {
		t.Setenv(v, "")
	}
	write := func(t *testing.T, path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		backend string
		setup   func(t *testing.T, home string)
		cfgEnv  []string
		want    []string
	}{
		{name: "nothing", backend: "claude", want: nil},
		{name: "env", backend: "claude", setup: func(t *testing.T, _ string) { t.Setenv("ANTHROPIC_API_KEY", "sk-x") },
			want: []string{"ANTHROPIC_API_KEY"}},
		{name: "ralph.toml env", backend: "codex", cfgEnv: []string{"OPENAI_API_KEY=sk-y"},
			want: []string{"OPENAI_API_KEY ([agents.codex] env)"}},
		{name: "ralph.toml env empties it", backend: "codex", cfgEnv: []string{"OPENAI_API_KEY="},
			setup: func(t *testing.T, _ string) { t.Setenv("OPENAI_API_KEY", "sk-z") }, want: nil},
		{name: "login file", backend: "codex", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".codex", "auth.json"), `{"tokens": {}}`)
		}, want: []string{"~/.codex/auth.json"}},
		{name: "empty login file", backend: "codex", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".codex", "auth.json"), "\n")
		}, want: nil},
		{name: "CODEX_HOME moves it", backend: "codex", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".codex", "auth.json"), `{}`)
			t.Setenv("CODEX_HOME", filepath.Join(home, "elsewhere"))
		}, want: nil},
		{name: "qwen settings with a key", backend: "qwen", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".qwen", "settings.json"), `{"security": {"auth": {"apiKey": "k"}}}`)
		}, want: []string{"~/.qwen/settings.json"}},
		{name: "qwen settings without one", backend: "qwen", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".qwen", "settings.json"), `{"ui": {"theme": "dark"}}`)
		}, want: nil},
		{name: "opencode config content with a provider", backend: "opencode", setup: func(t *testing.T, _ string) {
			t.Setenv("OPENCODE_CONFIG_CONTENT", `{"provider": {"local": {"npm": "@ai-sdk/openai-compatible"}}}`)
		}, want: []string{"OPENCODE_CONFIG_CONTENT"}},
		{name: "opencode config content without one", backend: "opencode", setup: func(t *testing.T, _ string) {
			t.Setenv("OPENCODE_CONFIG_CONTENT", `{"model": "x/y"}`)
		}, want: nil},
		{name: "opencode config file with a provider", backend: "opencode", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, "oc.json"), `{"provider": {"p": {}}}`)
			t.Setenv("OPENCODE_CONFIG", filepath.Join(home, "oc.json"))
		}, want: []string{"OPENCODE_CONFIG"}},
		{name: "opencode auth file under XDG_DATA_HOME", backend: "opencode", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, "data", "opencode", "auth.json"), `{"anthropic": {}}`)
			t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
		}, want: []string{"~/data/opencode/auth.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			if tt.setup != nil {
				tt.setup(t, home)
			}
			got := credentialSources(tt.backend, tt.cfgEnv)
			if !slices.Equal(got, tt.want) {
				t.Errorf("credentialSources(%s) = %q, want %q", tt.backend, got, tt.want)
			}
		})
	}
}

func TestCredentialHint(t *testing.T) {
	for name, want := range map[string]string{
		"claude": "set ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX or CLAUDE_CODE_USE_FOUNDRY, or run `claude auth login`",
		"amp":    "set AMP_API_KEY, or run `amp login`",
	} {
		if got := credentialHint(name); got != want {
			t.Errorf("credentialHint(%s) = %q, want %q", name, got, want)
		}
	}
	// Every backend ralph drives has a credentials entry.
	for _, b := range registry.CLIs {
		if _, ok := agentCredentials[b.Name]; !ok {
			t.Errorf("no credentials entry for %s", b.Name)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-abcdefgh")
	t.Setenv("GH_TOKEN", "short")
	secrets := secretValues(map[string][]string{"codex": {"OPENAI_API_KEY=sk-openai-12345678", "NOT_A_PAIR"}})
	out := redact("a sk-ant-abcdefgh b sk-openai-12345678 c short", secrets)
	if strings.Contains(out, "sk-ant-abcdefgh") || strings.Contains(out, "sk-openai-12345678") {
		t.Errorf("redact left a secret: %q", out)
	}
	if want := "a [redacted] b [redacted] c short"; out != want {
		t.Errorf("redact = %q, want %q", out, want)
	}
}
