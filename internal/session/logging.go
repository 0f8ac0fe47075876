package session

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// LogFile is the run log under .ralph/logs/: every slog record of every
// ralph command run in the workspace, appended. It is git-ignored with the
// rest of .ralph/logs/.
const LogFile = "ralph.log"

// logFileCap is the size past which the run log is rotated when a command
// opens it: ralph.log becomes ralph.log.1 (replacing the older one), so
// the logs never take more than about twice this.
const logFileCap = 8 << 20

// logOutput is where ralph's slog records go. Never to a terminal as
// slog text unless -v: every record goes to the run log file once a
// workspace is known, to stderr only with -v, and warnings and errors go
// to the person watching as lines in ralph's own format: through the
// run's reporter while a run is going, else as "ralph: warning: …" on
// stderr.
type logOutput struct {
	mu sync.Mutex
	// verbose is -v: records are also written to stderr as slog text.
	verbose bool
	stderr  io.Writer
	// path is the log file, known once a workspace is open; file is it
	// opened, which happens at the first record after .ralph/ is set up.
	path string
	file *os.File
	// notice shows a warning or error to the person watching (the run's
	// reporter); nil when no run is reporting.
	notice func(level slog.Level, text string)
	// scrub takes this process's secrets out of every record.
	scrub *secrets.Scrubber
}

func newLogOutput(stderr io.Writer, verbose bool) *logOutput {
	return &logOutput{stderr: secrets.Writer(stderr, secrets.ForProcess("")), verbose: verbose, scrub: secrets.ForProcess("")}
}

// logger returns a logger writing to o: Info and above (Debug with -v) as
// slog text, Warn and above also as notices.
func (o *logOutput) logger() *slog.Logger {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	return slog.New(&logHandler{out: o, text: slog.NewTextHandler(o, &slog.HandlerOptions{Level: level})})
}

// useWorkspace points the log at ws's .ralph/logs/ralph.log. The file is
// only created once .ralph/ has its .gitignore (ralph init or a run has set
// it up), so a command never leaves an untracked log in a repository.
func (o *logOutput) useWorkspace(ws *workspace.Workspace) {
	o.mu.Lock()
	defer o.mu.Unlock()
	path := filepath.Join(ws.Path(workspace.Logs), LogFile)
	if path == o.path {
		return
	}
	o.closeFile()
	o.path = path
	o.scrub = secrets.ForProcess(ws.Root)
}

// setNotice routes warnings and errors to show while a run reports its
// progress; the returned function stops it.
func (o *logOutput) setNotice(show func(level slog.Level, text string)) (stop func()) {
	o.mu.Lock()
	o.notice = show
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.notice = nil
		o.mu.Unlock()
	}
}

// Write takes one formatted record (slog handlers write a record at once).
func (o *logOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	p = o.scrub.Bytes(p)
	if o.verbose {
		_, _ = o.stderr.Write(p)
	}
	if f := o.openFile(); f != nil {
		_, _ = f.Write(p)
	}
	return n, nil
}

// openFile opens the log file for appending when it can. The caller
// holds o.mu.
func (o *logOutput) openFile() *os.File {
	if o.file != nil || o.path == "" {
		return o.file
	}
	dir := filepath.Dir(o.path)
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), ".gitignore")); err != nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	if fi, err := os.Stat(o.path); err == nil && fi.Size() >= logFileCap {
		_ = os.Rename(o.path, o.path+".1")
	}
	f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		o.path = "" // do not try again for every record
		return nil
	}
	o.file = f
	return f
}

func (o *logOutput) closeFile() {
	if o.file != nil {
		_ = o.file.Close()
		o.file = nil
	}
}

// Close closes the log file.
func (o *logOutput) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closeFile()
	return nil
}

// show gives a warning or error to the person watching.
func (o *logOutput) show(level slog.Level, text string) {
	o.mu.Lock()
	notice := o.notice
	// The workspace's scrubber (its ralph.toml's key variables too), as
	// the log file gets.
	text = o.scrub.String(text)
	o.mu.Unlock()
	switch {
	case notice != nil:
		notice(level, text)
	case o.verbose:
		// The slog line is already on stderr.
	default:
		word := "warning"
		if level >= slog.LevelError {
			word = "error"
		}
		fmt.Fprintf(o.stderr, "ralph: %s: %s\n", word, text)
	}
}

// logHandler writes records as slog text to a logOutput and shows
// warnings and errors as notices.
type logHandler struct {
	out  *logOutput
	text slog.Handler
	// errAttr is the error attribute the logger was given With, if any.
	errAttr string
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.text.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.text.Enabled(ctx, r.Level) {
		if err := h.text.Handle(ctx, r); err != nil {
			return err
		}
	}
	if r.Level >= slog.LevelWarn {
		h.out.show(r.Level, noticeText(r, h.errAttr))
	}
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.text = h.text.WithAttrs(as)
	for _, a := range as {
		if isErrKey(a.Key) {
			c.errAttr = a.Value.String()
		}
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.text = h.text.WithGroup(name)
	return &c
}

// isErrKey reports whether an attribute carries the error: "err" as
// ralph names it, or "Error" as the Temporal SDK does.
func isErrKey(key string) bool {
	return strings.EqualFold(key, "err") || strings.EqualFold(key, "error")
}

// noticeText words a record for a person: its message, then its error
// attribute (see isErrKey), the one detail that says what went wrong.
// The other attributes stay in the log file.
func noticeText(r slog.Record, errAttr string) string {
	text := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if isErrKey(a.Key) {
			errAttr = a.Value.String()
			return false
		}
		return true
	})
	if errAttr = strings.TrimSpace(errAttr); errAttr != "" {
		text += ": " + errAttr
	}
	return text
}
