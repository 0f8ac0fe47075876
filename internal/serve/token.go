package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// LoadToken returns the access token: read from file when it names one
// that exists, else new, and written 0600 to file or .ralph/serve.token.
func LoadToken(ws *workspace.Workspace, file string) (string, error) {
	if err := os.MkdirAll(ws.StateDir(), 0o755); err != nil {
		return "", err
	}
	ignorePrivate(ws)
	if file != "" {
		if data, err := os.ReadFile(file); err == nil {
			tok := strings.TrimSpace(string(data))
			if len(tok) < 16 {
				return "", failure.New(failure.Usage, fmt.Errorf("%s: the token is shorter than 16 characters", file))
			}
			return tok, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", failure.New(failure.Usage, fmt.Errorf("read token: %w", err))
		}
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	if file == "" {
		file = ws.Path(TokenFile)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	// Through a temporary file and a rename: a crash mid-write must not
	// leave a short token that the next --token-file run refuses.
	if err := workspace.WriteFileMode(file, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	return tok, nil
}

// ignorePrivate makes sure .ralph/.gitignore keeps the token and the
// dashboard's lock out of git and out of snapshots, in workspaces set up
// before ralph serve had them.
func ignorePrivate(ws *workspace.Workspace) {
	path := ws.Path(".gitignore")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_ = workspace.WriteFile(path, []byte("# ralph's private files: the run history must survive rollbacks.\n"+strings.Join(workspace.Private, "\n")+"\n"))
		return
	}
	if err != nil {
		return
	}
	lines, before := strings.Split(string(data), "\n"), len(data)
	for _, name := range []string{"/" + TokenFile, "/" + LockFile} {
		if slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == name }) {
			continue
		}
		if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
			data = append(data, '\n')
		}
		data = append(data, name+"\n"...)
	}
	if len(data) != before {
		_ = workspace.WriteFile(path, data)
	}
}
