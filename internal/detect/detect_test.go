package detect

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/config"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// onPath fakes a PATH holding the named programs.
func onPath(names ...string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, n := range names {
			if n == name {
				return "/usr/bin/" + name, nil
			}
		}
		return "", errors.New("not found")
	}
}

const allScripts = `{"name": "shop", "scripts": {"dev": "vite", "build": "vite build", "lint": "eslint .", "typecheck": "tsc --noEmit", "test": "vitest run", "format": "prettier -w ."}}`

func TestChecks(t *testing.T) {
	goChecks := []Check{
		{Name: "build", Run: []string{"go", "build", "./..."}, From: "go.mod"},
		{Name: "vet", Run: []string{"go", "vet", "./..."}, From: "go.mod"},
		{Name: "test", Run: []string{"go", "test", "./..."}, From: "go.mod"},
	}
	scripts := func(pm, from string) []Check {
		var out []Check
		for _, s := range []string{"build", "typecheck", "lint", "test"} {
			out = append(out, Check{Name: s, Run: []string{pm, "run", s}, From: from})
		}
		return out
	}
	tests := []struct {
		name  string
		files map[string]string
		path  []string
		want  []Check
	}{
		{"nothing to go on", map[string]string{"README.md": "# hi\n"}, nil, nil},
		{"go module", map[string]string{"go.mod": "module example.com/x\n"}, nil, goChecks},
		{"npm by its lockfile", map[string]string{"package.json": allScripts, "package-lock.json": "{}"}, nil, scripts("npm", "package.json, package-lock.json")},
		{"pnpm by its lockfile", map[string]string{"package.json": allScripts, "pnpm-lock.yaml": ""}, nil, scripts("pnpm", "package.json, pnpm-lock.yaml")},
		{"yarn by its lockfile", map[string]string{"package.json": allScripts, "yarn.lock": ""}, nil, scripts("yarn", "package.json, yarn.lock")},
		{"bun by its binary lockfile", map[string]string{"package.json": allScripts, "bun.lockb": ""}, nil, scripts("bun", "package.json, bun.lockb")},
		{"bun by its text lockfile", map[string]string{"package.json": allScripts, "bun.lock": ""}, nil, scripts("bun", "package.json, bun.lock")},
		{"no lockfile: packageManager field", map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0", "scripts": {"test": "vitest"}}`}, nil,
			[]Check{{Name: "test", Run: []string{"pnpm", "run", "test"}, From: "package.json"}}},
		{"no lockfile: npm", map[string]string{"package.json": `{"scripts": {"lint": "eslint ."}}`}, nil,
			[]Check{{Name: "lint", Run: []string{"npm", "run", "lint"}, From: "package.json"}}},
		{"npm init's placeholder test is no check", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`, "package-lock.json": "{}"}, nil, nil},
		{"only the check scripts", map[string]string{"package.json": `{"scripts": {"dev": "vite", "start": "node .", "test": "jest"}}`, "yarn.lock": ""}, nil,
			[]Check{{Name: "test", Run: []string{"yarn", "run", "test"}, From: "package.json, yarn.lock"}}},
		{"pyproject with python on PATH", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n"}, []string{"python", "python3"},
			[]Check{{Name: "test", Run: []string{"python", "-m", "pytest"}, From: "pyproject.toml"}}},
		{"pytest.ini with only python3", map[string]string{"pytest.ini": "[pytest]\n"}, []string{"python3"},
			[]Check{{Name: "test", Run: []string{"python3", "-m", "pytest"}, From: "pytest.ini"}}},
		{"cargo", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, nil,
			[]Check{{Name: "test", Run: []string{"cargo", "test"}, From: "Cargo.toml"}}},
		{"a Makefile test target", map[string]string{"Makefile": ".PHONY: test\n\ntest: build\n\t./run-tests\n"}, nil,
			[]Check{{Name: "test", Run: []string{"make", "test"}, From: "Makefile (target test)"}}},
		{"a Makefile test target replaces go test", map[string]string{"go.mod": "module x\n", "Makefile": "test:\n\tgo test -race ./...\n"}, nil,
			[]Check{goChecks[0], goChecks[1], {Name: "test", Run: []string{"make", "test"}, From: "Makefile (target test)"}}},
		{"a Makefile without a test target", map[string]string{"Makefile": ".PHONY: test-unit\ntest-unit:\n\tx\ntest := 1\nall: test\n\t@echo test: done\n"}, nil, nil},
		{"go and npm: the second build is qualified", map[string]string{"go.mod": "module x\n", "package.json": `{"scripts": {"build": "vite build", "test": "vitest"}}`, "package-lock.json": "{}"}, nil,
			append(append([]Check{}, goChecks...),
				Check{Name: "npm-build", Run: []string{"npm", "run", "build"}, From: "package.json, package-lock.json"},
				Check{Name: "npm-test", Run: []string{"npm", "run", "test"}, From: "package.json, package-lock.json"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			got, err := checks(root, onPath(tt.path...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("checks:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestChecksBadPackageJSON(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"package.json": "{not json"})
	if _, err := Checks(root); err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Fatalf("err = %v, want one naming package.json", err)
	}
}

func TestWriteConfig(t *testing.T) {
	goMod := map[string]string{"go.mod": "module example.com/x\n"}
	tests := []struct {
		name    string
		files   map[string]string
		find    bool
		gates   []string // the gate names ralph.toml has after
		says    string
		created bool
	}{
		{"fresh Go project", goMod, true, []string{"build", "vet", "test"}, "created ralph.toml with 3 gates", true},
		{"--no-detect", goMod, false, nil, "created ralph.toml with no gates (--no-detect)", true},
		{"nothing found", nil, true, nil, "created ralph.toml with no gates: found no go.mod", true},
		{"existing file without gates gets them", map[string]string{"go.mod": "module x\n", "ralph.toml": "agent = \"claude\"\n[limits]\nmax_iterations = 7"}, true,
			[]string{"build", "vet", "test"}, "added 3 gates to ralph.toml", false},
		{"existing file with a build table", map[string]string{"go.mod": "module x\n", "ralph.toml": "[gates.build]\nuse = \"off\"\n\n[theme]\nstylesheet = \"a.css\"\n"}, true,
			[]string{"build", "vet", "test"}, "added 3 gates", false},
		{"existing gates are kept", map[string]string{"go.mod": "module x\n", "ralph.toml": "[[gates]]\nname = \"check\"\nrun = [\"make\", \"check\"]\n"}, true,
			[]string{"check"}, "kept ralph.toml: it has 1 gate already", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			w, err := WriteConfig(root, tt.find)
			if err != nil {
				t.Fatal(err)
			}
			if w.Created != tt.created {
				t.Errorf("Created = %v, want %v", w.Created, tt.created)
			}
			if !strings.Contains(w.String(), tt.says) {
				t.Errorf("says %q, want it to contain %q", w.String(), tt.says)
			}
			cfg, err := config.Load(root)
			if err != nil {
				t.Fatalf("ralph.toml does not load: %v", err)
			}
			var names []string
			for _, g := range cfg.Gates {
				names = append(names, g.Name)
			}
			if !reflect.DeepEqual(names, tt.gates) {
				t.Errorf("gates = %q, want %q", names, tt.gates)
			}
			if before, ok := tt.files["ralph.toml"]; ok {
				after, _ := os.ReadFile(filepath.Join(root, "ralph.toml"))
				for _, line := range strings.Split(before, "\n") {
					if !strings.Contains(string(after), line) {
						t.Errorf("the user's line %q is gone:\n%s", line, after)
					}
				}
				if strings.Contains(before, "[gates.build]") && (cfg.Build == nil || cfg.Build.Use != "off") {
					t.Errorf("[gates.build] lost: %+v", cfg.Build)
				}
			}
			// Twice is safe: the second run keeps what the first wrote.
			again, err := WriteConfig(root, tt.find)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) > 0 && (again.Existing != len(names) || len(again.Gates) != 0) {
				t.Errorf("second run: %+v", again)
			}
		})
	}
}

func TestWriteConfigTemplateKeepsItsComments(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"})
	if _, err := WriteConfig(root, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(root, "ralph.toml"))
	got := string(data)
	example := strings.Index(got, "# [[gates]]")
	active := strings.Index(got, "[[gates]]  # from Cargo.toml\nname = \"test\"\nrun = [\"cargo\", \"test\"]\n")
	build := strings.Index(got, "# [gates.build]")
	if example < 0 || active < example || build < active {
		t.Errorf("the active gate is not between the example and [gates.build]:\n%s", got)
	}
	if strings.Replace(got, "\n"+TOML([]Check{{Name: "test", Run: []string{"cargo", "test"}, From: "Cargo.toml"}}), "", 1) != config.Template {
		t.Errorf("the template changed beyond the gates:\n%s", got)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"go":          `"go"`,
		`say "hi"\n`:  `"say \"hi\"\\n"`,
		"tab\there":   `"tab\u0009here"`,
		"naïve ./...": `"naïve ./..."`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
