package session

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// logWorkspace is a git repository, set up by ralph init when init is set.
func logWorkspace(t *testing.T, init bool) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	ws, err := workspace.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if init {
		if err := ws.Init(); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

type notice struct {
	level slog.Level
	text  string
}

func TestLogRouting(t *testing.T) {
	tests := []struct {
		name     string
		verbose  bool
		reporter bool
		log      func(*slog.Logger)
		// stderr lines that must and must not be there
		stderr, notStderr []string
		notices           []notice
		file              []string
	}{
		{
			name:     "a warning during a run is a notice, not slog text",
			reporter: true,
			log: func(l *slog.Logger) {
				l.With("component", "plancontext").Warn("theme not applied", "mode", "none", "err", "theme needs seed + pattern")
			},
			notStderr: []string{"time=", "theme"},
			notices:   []notice{{slog.LevelWarn, "theme not applied: theme needs seed + pattern"}},
			file:      []string{`level=WARN msg="theme not applied" component=plancontext mode=none err="theme needs seed + pattern"`},
		},
		{
			name:      "info stays in the file",
			reporter:  true,
			log:       func(l *slog.Logger) { l.Info("recipes resolved", "found", 3) },
			notStderr: []string{"recipes"},
			file:      []string{`level=INFO msg="recipes resolved" found=3`},
		},
		{
			name:      "an error names itself, with the err given With",
			reporter:  true,
			log:       func(l *slog.Logger) { l.With("err", errors.New("disk full")).Error("record event") },
			notStderr: []string{"record event"},
			notices:   []notice{{slog.LevelError, "record event: disk full"}},
			file:      []string{`level=ERROR msg="record event" err="disk full"`},
		},
		{
			// The Temporal SDK names its error attribute "Error"
			// ("RecordActivityHeartbeat with error", Error=…).
			name: "an error given under the Temporal SDK's key is shown too",
			log: func(l *slog.Logger) {
				l.Warn("RecordActivityHeartbeat with error", "Error", errors.New("workflow is busy"))
			},
			stderr:    []string{"ralph: warning: RecordActivityHeartbeat with error: workflow is busy\n"},
			notStderr: []string{"time="},
		},
		{
			name:      "without a run, a warning is a plain ralph line on stderr",
			log:       func(l *slog.Logger) { l.Warn("removing a stale lock", "age", "2m") },
			stderr:    []string{"ralph: warning: removing a stale lock\n"},
			notStderr: []string{"time="},
			file:      []string{`level=WARN msg="removing a stale lock" age=2m`},
		},
		{
			name:     "-v: slog text on stderr, debug included, and the notice too",
			verbose:  true,
			reporter: true,
			log: func(l *slog.Logger) {
				l.Debug("agent argv", "argv", "claude -p")
				l.Warn("theme not applied", "err", "x")
			},
			stderr:  []string{`level=DEBUG msg="agent argv" argv="claude -p"`, `level=WARN msg="theme not applied" err=x`},
			notices: []notice{{slog.LevelWarn, "theme not applied: x"}},
			file:    []string{`level=DEBUG msg="agent argv"`, `level=WARN msg="theme not applied" err=x`},
		},
		{
			name:      "-v without a run: the slog line alone",
			verbose:   true,
			log:       func(l *slog.Logger) { l.Warn("notify", "err", "exit status 1") },
			stderr:    []string{`level=WARN msg=notify err="exit status 1"`},
			notStderr: []string{"ralph: warning"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := logWorkspace(t, true)
			var stderr bytes.Buffer
			out := newLogOutput(&stderr, tt.verbose)
			out.useWorkspace(ws)
			var got []notice
			if tt.reporter {
				stop := out.setNotice(func(l slog.Level, text string) { got = append(got, notice{l, text}) })
				defer stop()
			}
			tt.log(out.logger())
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q; it is:\n%s", w, stderr.String())
				}
			}
			for _, w := range tt.notStderr {
				if strings.Contains(stderr.String(), w) {
					t.Errorf("stderr has %q; it is:\n%s", w, stderr.String())
				}
			}
			if len(got) != len(tt.notices) {
				t.Fatalf("notices %v, want %v", got, tt.notices)
			}
			for i := range got {
				if got[i] != tt.notices[i] {
					t.Errorf("notice %d = %v, want %v", i, got[i], tt.notices[i])
				}
			}
			data, _ := os.ReadFile(filepath.Join(ws.Path(workspace.Logs), LogFile))
			for _, w := range tt.file {
				if !strings.Contains(string(data), w) {
					t.Errorf("log file lacks %q; it is:\n%s", w, data)
				}
			}
		})
	}
}

// A repository ralph has not set up gets no log file: it would show up in
// git status, as .ralph/.gitignore is not there to hide it.
func TestLogFileOnlyInASetUpWorkspace(t *testing.T) {
	ws := logWorkspace(t, false)
	var stderr bytes.Buffer
	out := newLogOutput(&stderr, false)
	out.useWorkspace(ws)
	out.logger().Info("hello")
	_ = out.Close()
	if _, err := os.Stat(ws.StateDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".ralph/ was created (%v)", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// The log appends across commands and rotates once it passes its cap.
func TestLogFileAppendsAndRotates(t *testing.T) {
	ws := logWorkspace(t, true)
	path := filepath.Join(ws.Path(workspace.Logs), LogFile)
	for _, msg := range []string{"first", "second"} {
		out := newLogOutput(&bytes.Buffer{}, false)
		out.useWorkspace(ws)
		out.logger().Info(msg)
		_ = out.Close()
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "msg=first") || !strings.Contains(string(data), "msg=second") {
		t.Fatalf("log does not hold both commands' records:\n%s", data)
	}

	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), logFileCap), 0o644); err != nil {
		t.Fatal(err)
	}
	out := newLogOutput(&bytes.Buffer{}, false)
	out.useWorkspace(ws)
	out.logger().Info("after rotation")
	_ = out.Close()
	data, _ = os.ReadFile(path)
	if !strings.Contains(string(data), "after rotation") || len(data) >= logFileCap {
		t.Errorf("log was not rotated: %d bytes", len(data))
	}
	if fi, err := os.Stat(path + ".1"); err != nil || fi.Size() != logFileCap {
		t.Errorf("ralph.log.1 does not hold the old log: %v", err)
	}
}
