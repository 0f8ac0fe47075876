package snapshot

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// The chain of a task's iterations gets a commit every iteration. Its
// commits are written here, as git writes a loose object, rather than
// by a `git commit-tree` each: starting git costs a few milliseconds of
// CPU, paid on every iteration beside the next agent's start.

// looseObjects is where the iterations' commits are written: the
// repository's object directory, "" when git must write them (a
// repository of SHA-256 objects, or one shared between users, whose
// files git gives modes of its own).
func (r *Repo) looseObjects(ctx context.Context) string {
	out, err := r.git(ctx, nil, nil, "rev-parse", "--git-path", "objects", "--show-object-format")
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[1] != "sha1" {
		return ""
	}
	dir := lines[0]
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.top, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	// Unset, git exits 1 and prints nothing; set, even to false, git
	// writes the objects.
	if out, err := r.git(ctx, nil, nil, "config", "--get", "core.sharedRepository"); err == nil || len(out) > 0 {
		return ""
	}
	return dir
}

// commitObject is the commit `git commit-tree` writes for tree, parent
// ("" for none) and msg, by ralph, at at: the same bytes, so the same id.
func commitObject(tree, parent, msg string, at time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	who := fmt.Sprintf("%s <%s> %d +0000", git.IdentityName, git.IdentityEmail, at.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", who, who, msg)
	if !strings.HasSuffix(msg, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// looseWriter writes loose objects into one object directory. Its
// compressor is reused: a new one costs more than the object.
type looseWriter struct {
	dir string
	zw  *zlib.Writer
}

// write writes an object of type typ and content body, as git does:
// compressed under a temporary name, read-only, then linked to its name
// (an object already there is kept). It returns the object's id.
func (w *looseWriter) write(typ string, body []byte) (string, error) {
	dir := w.dir
	header := fmt.Appendf(nil, "%s %d\x00", typ, len(body))
	h := sha1.New()
	h.Write(header)
	h.Write(body)
	id := hex.EncodeToString(h.Sum(nil))
	sub := filepath.Join(dir, id[:2])
	name := filepath.Join(sub, id[2:])
	if _, err := os.Lstat(name); err == nil {
		return id, nil
	}
	// Only the fan-out directory: a missing object directory is an error,
	// as it is to git.
	if err := os.Mkdir(sub, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("write object %s: %w", id, err)
	}
	// git's own temporary name: git gc removes one a crash leaves.
	f, err := os.CreateTemp(sub, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("write object %s: %w", id, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if w.zw == nil {
		w.zw, _ = zlib.NewWriterLevel(f, zlib.BestSpeed) // core.looseCompression's default
	} else {
		w.zw.Reset(f)
	}
	zw := w.zw
	zw.Write(header)
	zw.Write(body)
	err = zw.Close()
	if err == nil {
		err = f.Chmod(0o444)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A link never replaces an object another git wrote meanwhile;
		// where the file system has none, rename, as git does.
		switch err = os.Link(tmp, name); {
		case errors.Is(err, fs.ErrExist):
			err = nil
		case err != nil:
			err = os.Rename(tmp, name)
		}
	}
	if err != nil {
		return "", fmt.Errorf("write object %s: %w", id, err)
	}
	return id, nil
}
