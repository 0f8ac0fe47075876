package workspace

import (
	"path"
	"strings"
)

// Private lists ralph's private entries of .ralph/, as .ralph/.gitignore
// patterns (a trailing slash marks a directory): the run history, the
// lock, the logs, the last request, the dashboard's token and lock, the
// notifier's lock, and the worktrees, the app's screenshots. They are the harness's, never the agent's: git ignores them,
// snapshots leave them out and rollbacks leave them alone, and the
// dashboard never shows them. IsPrivate and PrivatePaths read this list.
var Private = []string{
	"/" + Database, "/" + Database + "-wal", "/" + Database + "-shm", "/" + Database + "-journal",
	"/" + LockFile, "/" + Logs + "/", "/" + Request, "/" + ServeToken, "/" + ServeLock, "/" + NotifyLock, "/" + Worktrees + "/",
	"/" + Preview + "/",
}

// PrivatePaths returns Private as paths from the workspace root
// (".ralph/ralph.db", ".ralph/logs", …), for git pathspecs.
func PrivatePaths() []string {
	paths := make([]string, len(Private))
	for i, p := range Private {
		paths[i] = Dir + "/" + strings.Trim(p, "/")
	}
	return paths
}

// IsPrivate reports whether rel, a slash-separated path from the
// workspace root, is one of ralph's private entries or lies inside one,
// as git's reading of the .gitignore patterns has it.
func IsPrivate(rel string) bool {
	rest, ok := strings.CutPrefix(path.Clean(rel), Dir+"/")
	if !ok {
		return false
	}
	for _, p := range Private {
		name := strings.Trim(p, "/")
		if rest == name || strings.HasPrefix(rest, name+"/") {
			return true
		}
	}
	return false
}
