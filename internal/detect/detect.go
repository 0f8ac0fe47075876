// Package detect finds a project's own checks — its build, linters and
// tests — from the files at its root, so that `ralph init` can write them
// into ralph.toml as active [[gates]]: a run whose gates are only ralph's
// built-ins completes on the agent's word.
//
// What is detected, at the root only:
//
//	go.mod                    build (go build ./...), vet (go vet ./...), test (go test ./...)
//	package.json              its build, typecheck, lint and test scripts, run through the
//	                          package manager whose lockfile is there (package-lock.json → npm,
//	                          pnpm-lock.yaml → pnpm, yarn.lock → yarn, bun.lockb or bun.lock
//	                          → bun; else its packageManager field; else npm)
//	pyproject.toml, pytest.ini   pytest (python -m pytest)
//	Cargo.toml                test (cargo test)
//	Makefile with a test target  test (make test), in place of the other test commands:
//	                          the project says there how it runs its tests
//
// A name two ecosystems both claim is qualified by the tool the second
// time (a package.json build next to go.mod's is npm-build).
package detect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Check is one of the project's own checks.
type Check struct {
	// Name is the gate's name in ralph.toml.
	Name string
	// Run is the argv; never a shell string.
	Run []string
	// From says which file it was found in.
	From string
}

// Command is the check's argv as one line, for people.
func (c Check) Command() string { return strings.Join(c.Run, " ") }

// Checks returns the checks the files at root name, in the order they
// should run (build before tests). A file that exists but cannot be read
// or parsed is an error naming it.
func Checks(root string) ([]Check, error) {
	return checks(root, exec.LookPath)
}

// checks is Checks with the PATH lookup that picks the Python program.
func checks(root string, lookPath func(string) (string, error)) ([]Check, error) {
	var found []Check
	add := func(tool string, cs ...Check) {
		for _, c := range cs {
			for _, f := range found {
				if f.Name == c.Name {
					c.Name = tool + "-" + c.Name
					break
				}
			}
			found = append(found, c)
		}
	}
	if exists(root, "go.mod") {
		add("go",
			Check{Name: "build", Run: []string{"go", "build", "./..."}, From: "go.mod"},
			Check{Name: "vet", Run: []string{"go", "vet", "./..."}, From: "go.mod"},
			Check{Name: "test", Run: []string{"go", "test", "./..."}, From: "go.mod"})
	}
	if exists(root, "package.json") {
		pm, cs, err := packageScripts(root)
		if err != nil {
			return nil, err
		}
		add(pm, cs...)
	}
	for _, name := range []string{"pyproject.toml", "pytest.ini"} {
		if exists(root, name) {
			add("python", Check{Name: "test", Run: []string{python(lookPath), "-m", "pytest"}, From: name})
			break
		}
	}
	if exists(root, "Cargo.toml") {
		add("cargo", Check{Name: "test", Run: []string{"cargo", "test"}, From: "Cargo.toml"})
	}
	mk, ok, err := makeTestTarget(root)
	if err != nil {
		return nil, err
	}
	if ok {
		// The project's own way to run its tests replaces the others.
		kept := found[:0]
		for _, c := range found {
			if c.Name != "test" && !strings.HasSuffix(c.Name, "-test") {
				kept = append(kept, c)
			}
		}
		found = append(kept, Check{Name: "test", Run: []string{"make", "test"}, From: mk + " (target test)"})
	}
	return found, nil
}

// scriptOrder is the package.json scripts that become gates, in the order
// they run.
var scriptOrder = []string{"build", "typecheck", "lint", "test"}

// lockfiles map a lockfile to its package manager, in the order they are
// looked for.
var lockfiles = []struct{ file, pm string }{
	{"pnpm-lock.yaml", "pnpm"},
	{"yarn.lock", "yarn"},
	{"bun.lockb", "bun"},
	{"bun.lock", "bun"},
	{"package-lock.json", "npm"},
	{"npm-shrinkwrap.json", "npm"},
}

// npmPlaceholderTest is the test script `npm init` writes, which always
// fails: not a check.
const npmPlaceholderTest = "no test specified"

// packageScripts reads package.json's scripts and the package manager.
func packageScripts(root string) (string, []Check, error) {
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return "", nil, err
	}
	var pkg struct {
		Scripts        map[string]string `json:"scripts"`
		PackageManager string            `json:"packageManager"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", nil, fmt.Errorf("package.json: %w", err)
	}
	pm, from := "npm", "package.json"
	for _, l := range lockfiles {
		if exists(root, l.file) {
			pm, from = l.pm, "package.json, "+l.file
			break
		}
	}
	if from == "package.json" && pkg.PackageManager != "" {
		// "pnpm@9.1.0": the manager Corepack would use.
		name, _, _ := strings.Cut(pkg.PackageManager, "@")
		switch name {
		case "npm", "pnpm", "yarn", "bun":
			pm = name
		}
	}
	var out []Check
	for _, s := range scriptOrder {
		script := strings.TrimSpace(pkg.Scripts[s])
		if script == "" || (s == "test" && strings.Contains(script, npmPlaceholderTest)) {
			continue
		}
		out = append(out, Check{Name: s, Run: []string{pm, "run", s}, From: from})
	}
	return pm, out, nil
}

// makeTarget matches a rule for the target test: "test:" or "test
// other:", not an assignment such as "test := 1".
var makeTarget = regexp.MustCompile(`^(?:[^\s:=#]+\s+)*test(?:\s+[^\s:=#]+)*\s*::?(?:[^=]|$)`)

// makeTestTarget reports whether the root's makefile has a test target,
// and which file it is.
func makeTestTarget(root string) (string, bool, error) {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if makeTarget.MatchString(sc.Text()) {
				return name, true, nil
			}
		}
		return "", false, sc.Err()
	}
	return "", false, nil
}

// python is the program that runs pytest: python, or python3 where only
// that is installed.
func python(lookPath func(string) (string, error)) string {
	if _, err := lookPath("python"); err != nil {
		if _, err := lookPath("python3"); err == nil {
			return "python3"
		}
	}
	return "python"
}

// exists reports whether root holds name.
func exists(root, name string) bool {
	_, err := os.Stat(filepath.Join(root, name))
	return err == nil
}
