package cli

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/render"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The test binary stands in for ralph, supervisor included.
	proc.RunSupervisor()
	testscript.Main(m, map[string]func(){
		"ralph": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: each one is a
// user-visible behaviour of ralph, readable as documentation.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"waitfor":  cmdWaitFor,
			"telegram": cmdTelegram,
			"webhook":  cmdWebhook,
			"slack":    cmdSlack,
			"notblank": cmdNotBlank,
		},
		Condition: scriptCondition,
		Setup: func(env *testscript.Env) error {
			env.Values["telegram"] = &telegramHolder{}
			env.Values["webhook"] = &webhookHolder{}
			env.Values["slack"] = &slackHolder{}
			env.Setenv("GIT_AUTHOR_NAME", "ralph test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@ralph.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "ralph test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@ralph.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir+"/home")
			// cargo, run by a detected gate, finds the Rust toolchain
			// installed for the real home.
			for name, dir := range map[string]string{"RUSTUP_HOME": ".rustup", "CARGO_HOME": ".cargo"} {
				if v := os.Getenv(name); v != "" {
					env.Setenv(name, v)
				} else if h, err := os.UserHomeDir(); err == nil {
					env.Setenv(name, filepath.Join(h, dir))
				}
			}
			// Gates that run the go command share the test's build cache.
			if c, err := goCache(); err == nil {
				env.Setenv("GOCACHE", c)
			}
			return os.MkdirAll(env.WorkDir+"/home", 0o755)
		},
	})
}

// scriptCondition answers [chromium]: a browser the ui-renders gate can
// use is on PATH. Under CI a missing one is an error, not a skip: make
// test installs it (scripts/install-chromium.sh).
func scriptCondition(cond string) (bool, error) {
	if cond != "chromium" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if _, err := render.Find(""); err != nil {
		if os.Getenv("CI") != "" {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// cmdNotBlank checks that each file is a PNG picture of something: at
// least 8 colours.
//
//	notblank file...
func cmdNotBlank(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: notblank file...")
	}
	for _, name := range args {
		img, err := png.Decode(bytes.NewReader([]byte(ts.ReadFile(name))))
		if err != nil {
			ts.Fatalf("%s: %v", name, err)
		}
		colours := map[color.Color]bool{}
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y && len(colours) < 8; y += 2 {
			for x := b.Min.X; x < b.Max.X && len(colours) < 8; x += 2 {
				colours[img.At(x, y)] = true
			}
		}
		if len(colours) < 8 {
			ts.Fatalf("%s is blank: %d colours", name, len(colours))
		}
	}
}

// goCache is the go command's build cache outside the scripts.
func goCache() (string, error) {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c, nil
	}
	c, err := os.UserCacheDir()
	return filepath.Join(c, "go-build"), err
}

// cmdExitCode runs a command and checks its exit status:
//
//	exitcode N program [args...]
//
// Its output is kept for stdout and stderr assertions, as exec keeps it.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdWaitFor waits up to 15 seconds until a file, written by a command in
// the background, matches a regular expression (multi-line, as stdout's):
//
//	waitfor FILE REGEXP
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	var data []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, err = os.ReadFile(ts.MkAbs(args[0])); err == nil && re.Match(data) {
			return
		}
	}
	ts.Fatalf("timed out waiting for %s to match %q; it holds %q", args[0], args[1], data)
}
