package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// errNotBuilt marks a tree buildTree would not build exactly without the
// index (a directory among the paths, a path beyond a symbolic link, a
// configuration that changes how git records files); the caller reads the
// tree through the private index instead.
var errNotBuilt = errors.New("not built from the changed paths")

// errNotPlain is plainConfig's errNotBuilt: the repository's configuration
// makes git record files otherwise than buildTree does.
var errNotPlain = fmt.Errorf("%w: core.fileMode, core.symlinks or core.ignoreCase", errNotBuilt)

// maxCachedEntries bounds treeCache: past it the cache starts again
// empty.
const maxCachedEntries = 200_000

// treeEntry is one entry of a git tree.
type treeEntry struct {
	mode string // as git writes it in a tree: "100644", "100755", "120000", "160000", "40000"
	id   string // hex object id
}

func (e treeEntry) isTree() bool { return e.mode == "40000" }

// treeCache holds the trees buildTree read or wrote, by id, so that the
// directories an agent keeps writing in are read from git once. Trees are
// immutable; so are the maps it holds.
type treeCache struct {
	trees   map[string]map[string]treeEntry
	entries int // in all trees held
}

// dirNode is a directory of the tree being built: its entries as the
// base had them, with the changes applied, and the subdirectories that
// changed.
type dirNode struct {
	id      string // the tree base held here, "" for none
	entries map[string]treeEntry
	owned   bool // entries is n's own copy: something changed
	subs    map[string]*dirNode
}

// buildTree returns the tree of base with paths (slash-separated, relative
// to the working tree's root) brought to their state in the working tree:
// written, removed when gone, as `git update-index --add --remove
// --replace` stages them on an index of base, followed by `git write-tree`
// (a path below a directory that became a symbolic link is gone, as git
// add -A has it, where update-index refuses it). It reads no index: git
// hashes the changed files (hash-object, which converts content as git add
// does), the trees on the changed paths are read once (cat-file, then
// treeCache), and only those trees are written again (as loose objects, or
// by mktree, whose ids must equal the ones computed here). So its cost
// follows the changed paths and their directories, not the size of the
// tree. It fails with errNotBuilt when git would do something it does not
// (see errNotBuilt). The long-running gits and the configuration it keeps
// are read again when the repository's configuration files changed
// (freshConfig).
func (r *Repo) buildTree(ctx context.Context, base string, paths []string) (string, error) {
	if len(base) != 40 {
		return "", fmt.Errorf("%w: tree id %q is not SHA-1", errNotBuilt, base)
	}
	r.freshConfig()
	if err := r.plainConfig(ctx); err != nil {
		return "", err
	}
	ch, err := r.readChanges(paths)
	if err != nil {
		return "", err
	}
	if len(ch) == 0 {
		return base, nil
	}
	if err := r.hashBlobs(ctx, ch); err != nil {
		return "", err
	}
	dirs, err := r.loadDirs(ctx, base, ch)
	if err != nil {
		return "", err
	}
	root := &dirNode{id: base, entries: dirs[""]}
	for _, c := range ch {
		if err := root.apply(c, "", dirs); err != nil {
			return "", err
		}
	}
	loose := r.looseTrees()
	var batch *bytes.Buffer // mktree's input, when mktree writes them
	if loose == "" {
		batch = new(bytes.Buffer)
	}
	var written []writtenTree
	tree, empty := root.write(batch, &written)
	if empty {
		return emptyTree, nil
	}
	if len(written) == 0 {
		return tree, nil
	}
	b := treeBatch{ids: make([]string, len(written)), loose: loose}
	if batch != nil {
		b.req = batch.Bytes()
	}
	for i, w := range written {
		b.ids[i] = w.id
		if b.loose != "" {
			b.bodies = append(b.bodies, w.body)
		}
	}
	if r.pendingTrees.broken() {
		// A write failed once: from then on, written before returning.
		if err := r.pendingTrees.writeNow(r, b); err != nil {
			return "", err
		}
	} else {
		r.pendingTrees.add(r, b)
	}
	for _, w := range written {
		r.trees.put(w.id, w.entries)
	}
	return tree, nil
}

// change is one changed path as buildTree found it in the working tree.
type change struct {
	path string
	// gone: the path names no file (removed). dir: it is a directory
	// now (a file became one: only a file at path is removed, as git
	// update-index does). Otherwise mode and, once hashed, id.
	gone, dir bool
	mode      string
	link      string // a symbolic link's target
	id        string
}

// readChanges lstats paths, leaving out ralph's private files and .git.
func (r *Repo) readChanges(paths []string) ([]change, error) {
	seen := map[string]bool{}
	var ch []change
	// In order, a file that became a directory goes before the files in
	// it (as git update-index needs them).
	for _, p := range slices.Sorted(slices.Values(paths)) {
		if p == "" || workspace.IsPrivate(p) || inGitDir(p) || seen[p] {
			continue
		}
		seen[p] = true
		// hash-object and cat-file read a path a line (a carriage
		// return at its end dropped, a leading quote unquoted).
		if !fs.ValidPath(p) || p == "." || strings.ContainsAny(p, "\n\r\x00") || strings.HasPrefix(p, `"`) || gitLike(p) {
			return nil, fmt.Errorf("%w: path %q", errNotBuilt, p)
		}
		if d := r.nestedRepo(p); d != "" {
			return nil, fmt.Errorf("%w: %s is inside the repository %s", errNotBuilt, p, d)
		}
		c := change{path: p}
		full := filepath.Join(r.top, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		switch {
		case r.beyondSymlink(p):
			// A directory above it became a link: git add -A records
			// the link, and nothing below it.
			c.gone = true
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			c.gone = true
		case err != nil:
			return nil, err
		case fi.Mode().IsRegular():
			c.mode = "100644"
			if fi.Mode().Perm()&0o100 != 0 {
				c.mode = "100755"
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			if c.link, err = os.Readlink(full); err != nil {
				return nil, err
			}
			c.mode = "120000"
		case fi.IsDir():
			c.dir = true
		default:
			return nil, fmt.Errorf("%w: %s is not a file git stores", errNotBuilt, p)
		}
		ch = append(ch, c)
	}
	return ch, nil
}

// beyondSymlink reports whether a directory above the slash-separated
// path p is a symbolic link in the working tree (git refuses such paths).
func (r *Repo) beyondSymlink(p string) bool {
	for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
		fi, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(p[:i])))
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// hashBlobs writes the changed files' and links' content as blobs and
// sets their ids: files through one hash-object, which converts content
// by the attributes and configuration as git add does; links' targets,
// as they are, through another, from files holding them.
func (r *Repo) hashBlobs(ctx context.Context, ch []change) error {
	var files, links []int
	for i := range ch {
		switch ch[i].mode {
		case "":
		case "120000":
			links = append(links, i)
		default:
			files = append(files, i)
		}
	}
	if len(links) > 0 {
		tmp, err := os.MkdirTemp("", "ralph-links-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if strings.ContainsAny(tmp, "\n\r") {
			return fmt.Errorf("%w: temporary directory %q", errNotBuilt, tmp)
		}
		names := make([]string, len(links))
		for k, i := range links {
			names[k] = filepath.Join(tmp, strconv.Itoa(k))
			if err := os.WriteFile(names[k], []byte(ch[i].link), 0o600); err != nil {
				return err
			}
		}
		if err := r.hashObjects(ctx, ch, links, names, "--no-filters"); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		names := make([]string, len(files))
		for k, i := range files {
			names[k] = ch[i].path
		}
		return r.hashObjects(ctx, ch, files, names)
	}
	return nil
}

// hashObjects writes the files called names (a line each: none holds a
// newline or starts with a quote) as blobs, the ids going to ch[which[k]].
func (r *Repo) hashObjects(ctx context.Context, ch []change, which []int, names []string, flags ...string) error {
	in := []byte(strings.Join(names, "\n") + "\n")
	var ids []string
	if len(flags) == 0 {
		var err error
		if ids, err = r.batchLines(ctx, &r.hasher, in, len(names), "hash-object", "-w", "--stdin-paths"); err != nil {
			return err
		}
	} else {
		args := append([]string{"hash-object", "-w"}, flags...)
		out, err := r.git(ctx, in, nil, append(args, "--stdin-paths")...)
		if err != nil {
			return err
		}
		ids = strings.Fields(string(out))
	}
	if len(ids) != len(which) {
		return fmt.Errorf("git hash-object: %d ids for %d files", len(ids), len(which))
	}
	for k, i := range which {
		ch[i].id = ids[k]
	}
	return nil
}

// loadDirs returns the entries base holds in each directory above the
// changed paths (by slash-separated path, "" the root; none for one base
// does not hold as a directory), from treeCache where it can and from one
// cat-file of the rest.
func (r *Repo) loadDirs(ctx context.Context, base string, ch []change) (map[string]map[string]treeEntry, error) {
	var want []string
	wanted := map[string]bool{"": true}
	for _, c := range ch {
		for i := strings.IndexByte(c.path, '/'); i >= 0; i = nextSlash(c.path, i) {
			if d := c.path[:i]; !wanted[d] {
				wanted[d] = true
				want = append(want, d)
			}
		}
	}
	want = append(want, "")
	slices.SortFunc(want, func(a, b string) int { return depth(a) - depth(b) })
	dirs := map[string]map[string]treeEntry{}
	absent := map[string]bool{}
	fetching := map[string]bool{}
	var fetch []string
	for _, d := range want {
		id := base
		if d != "" {
			parent, name := path.Split(d)
			parent = strings.TrimSuffix(parent, "/")
			if absent[parent] {
				absent[d] = true
				continue
			}
			if fetching[parent] {
				fetching[d] = true // by its path, with its parent
				fetch = append(fetch, d)
				continue
			}
			e, ok := dirs[parent][name]
			if !ok || !e.isTree() {
				absent[d] = true // not a directory in base
				continue
			}
			id = e.id
		}
		if entries, ok := r.trees.trees[id]; ok {
			dirs[d] = entries
		} else {
			fetching[d] = true
			fetch = append(fetch, d)
		}
	}
	if len(fetch) == 0 {
		return dirs, nil
	}
	var in strings.Builder
	for _, d := range fetch {
		if d == "" {
			in.WriteString(base + "\n")
		} else {
			in.WriteString(base + ":" + d + "\n")
		}
	}
	out, err := r.git(ctx, []byte(in.String()), nil, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for _, d := range fetch {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("git cat-file: output cut short")
		}
		if bytes.HasSuffix(header, []byte(" missing")) {
			if d == "" {
				// base itself: git lost it (a gc of a tree nothing
				// reaches), or it never was.
				return nil, fmt.Errorf("%w: tree %s is not in the repository", errNotBuilt, base)
			}
			out = rest
			continue // not in base
		}
		f := strings.Fields(string(header))
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file: unexpected header %q", header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size+1 > len(rest) {
			return nil, fmt.Errorf("git cat-file: unexpected header %q", header)
		}
		body := rest[:size]
		out = rest[size+1:]
		if f[1] != "tree" {
			if d == "" {
				return nil, fmt.Errorf("%w: %s is a %s, not a tree", errNotBuilt, base, f[1])
			}
			continue // a file where the change needs a directory
		}
		entries, err := parseTree(body)
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", f[0], err)
		}
		r.trees.put(f[0], entries)
		dirs[d] = entries
	}
	return dirs, nil
}

// depth is how many directories down the slash-separated directory d
// is, the root ("") 0.
func depth(d string) int {
	if d == "" {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// parseTree reads a tree object's content. Modes other than the ones git
// writes from an index are errNotBuilt: write-tree would write them as
// git normalises them.
func parseTree(b []byte) (map[string]treeEntry, error) {
	entries := map[string]treeEntry{}
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || len(b) < nul+1+sha1.Size {
			return nil, errors.New("malformed tree")
		}
		mode, name := string(b[:sp]), string(b[sp+1:nul])
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			return nil, fmt.Errorf("malformed tree: entry %q", name)
		}
		if _, dup := entries[name]; dup {
			return nil, fmt.Errorf("malformed tree: %q twice", name)
		}
		switch mode {
		case "100644", "100755", "120000", "160000", "40000":
		default:
			return nil, fmt.Errorf("%w: mode %s of %s", errNotBuilt, mode, name)
		}
		entries[name] = treeEntry{mode: mode, id: hex.EncodeToString(b[nul+1 : nul+1+sha1.Size])}
		b = b[nul+1+sha1.Size:]
	}
	return entries, nil
}

func (c *treeCache) put(id string, entries map[string]treeEntry) {
	if _, ok := c.trees[id]; ok {
		return
	}
	if c.trees == nil || c.entries+len(entries) > maxCachedEntries {
		c.trees, c.entries = map[string]map[string]treeEntry{}, 0
	}
	c.trees[id] = entries
	c.entries += len(entries)
}

// apply makes the change c, whose path is rel below n (dir, the
// directory n is, "" the root), in n and the directories below it.
func (n *dirNode) apply(c change, dir string, dirs map[string]map[string]treeEntry) error {
	rel := strings.TrimPrefix(c.path, dir)
	name, _, deeper := strings.Cut(rel, "/")
	cur, exists := n.entries[name]
	if !deeper {
		switch {
		case c.dir || c.gone:
			// update-index removes a file's entry; a directory's
			// entries it leaves, and a directory that replaced a
			// repository's entry (a gitlink) it would record anew.
			if exists && cur.mode == "160000" && c.dir {
				return fmt.Errorf("%w: %s is a directory where the tree has a repository", errNotBuilt, c.path)
			}
			if c.dir && (!exists || cur.isTree()) {
				return fmt.Errorf("%w: %s is a directory", errNotBuilt, c.path)
			}
			if exists && !cur.isTree() {
				n.remove(name)
			}
		default:
			n.set(name, treeEntry{mode: c.mode, id: c.id})
		}
		return nil
	}
	sub := n.subs[name]
	if sub == nil {
		switch {
		case exists && cur.mode == "160000":
			return fmt.Errorf("%w: %s is inside a repository's entry", errNotBuilt, c.path)
		case exists && cur.isTree():
			sub = &dirNode{id: cur.id, entries: dirs[dir+name]}
			if sub.entries == nil {
				return fmt.Errorf("tree of %s not read", dir+name)
			}
		case c.gone:
			return nil // nothing to remove below a file or nothing
		default:
			sub = &dirNode{} // a file replaced by a directory, or a new one
		}
		if n.subs == nil {
			n.subs = map[string]*dirNode{}
		}
		n.subs[name] = sub
		if sub.id == "" {
			n.own()
			n.entries[name] = treeEntry{mode: "40000"} // its id once written
		}
	}
	return sub.apply(c, dir+name+"/", dirs)
}

// own copies n's entries before its first change: they may be
// treeCache's, which never change.
func (n *dirNode) own() {
	if n.owned {
		return
	}
	m := make(map[string]treeEntry, len(n.entries)+1)
	for k, v := range n.entries {
		m[k] = v
	}
	n.entries, n.owned = m, true
}

func (n *dirNode) set(name string, e treeEntry) {
	n.own()
	delete(n.subs, name) // a file replaces a directory and all below it
	n.entries[name] = e
}

func (n *dirNode) remove(name string) {
	n.own()
	delete(n.entries, name)
}

// writtenTree is a tree buildTree computed, to be written.
type writtenTree struct {
	id      string
	entries map[string]treeEntry
	body    []byte // the tree object's content
}

// write computes the ids of n's changed subdirectories and of n, bottom
// up, appending each changed tree to written and, unless batch is nil, to
// batch (mktree -z --batch input); empty is set when n holds nothing (git
// writes no empty directory).
func (n *dirNode) write(batch *bytes.Buffer, written *[]writtenTree) (id string, empty bool) {
	for name, sub := range n.subs {
		if e, still := n.entries[name]; !still || !e.isTree() {
			continue
		}
		sid, sempty := sub.write(batch, written)
		switch {
		case sempty:
			n.remove(name)
		case sid != n.entries[name].id:
			n.own()
			n.entries[name] = treeEntry{mode: "40000", id: sid}
		}
	}
	if !n.owned && n.id != "" {
		return n.id, false
	}
	if len(n.entries) == 0 {
		return "", true
	}
	names := make([]string, 0, len(n.entries))
	for name := range n.entries {
		names = append(names, name)
	}
	key := func(name string) string {
		if n.entries[name].isTree() {
			return name + "/"
		}
		return name
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(key(a), key(b)) })
	var body bytes.Buffer
	for _, name := range names {
		e := n.entries[name]
		raw, _ := hex.DecodeString(e.id)
		body.WriteString(e.mode + " " + name + "\x00")
		body.Write(raw)
		if batch == nil {
			continue
		}
		typ := "blob"
		switch e.mode {
		case "40000":
			typ = "tree"
		case "160000":
			typ = "commit"
		}
		fmt.Fprintf(batch, "%s %s %s\t%s\x00", e.mode, typ, e.id, name)
	}
	if batch != nil {
		batch.WriteByte(0)
	}
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00", body.Len())
	h.Write(body.Bytes())
	id = hex.EncodeToString(h.Sum(nil))
	*written = append(*written, writtenTree{id: id, entries: n.entries, body: body.Bytes()})
	return id, false
}

// batchLines sends req to the long-running git *b (started with args,
// under the Repo's environment, when there is none) and returns the n
// object ids it answers, a line each. On any error *b is closed and nil:
// the next call starts git again. It first waits for the trees written
// in the background (cat-file may read them).
func (r *Repo) batchLines(ctx context.Context, b **git.Batch, req []byte, n int, args ...string) ([]string, error) {
	r.pendingTrees.wait(r)
	return r.askBatch(ctx, b, req, n, args...)
}

// askBatch is batchLines without the wait, for the background writer.
func (r *Repo) askBatch(ctx context.Context, b **git.Batch, req []byte, n int, args ...string) ([]string, error) {
	if *b == nil {
		nb, err := git.StartBatch(r.top, git.Options{Env: r.env}, append(slices.Clip(gitConfig), args...)...)
		if err != nil {
			return nil, err
		}
		*b = nb
	}
	start := time.Now()
	ids := make([]string, 0, n)
	err := (*b).Do(ctx, req, func(out *bufio.Reader) error {
		for range n {
			line, err := out.ReadString('\n')
			if err != nil {
				return err
			}
			id := strings.TrimSuffix(line, "\n")
			if !validID(id) {
				return fmt.Errorf("answered %q, not an object id", id)
			}
			ids = append(ids, id)
		}
		return nil
	})
	r.logger.Debug("git", "args", args, "batch", true, "elapsed", time.Since(start), "err", err)
	if err != nil {
		*b = nil
		return nil, err
	}
	return ids, nil
}

// validID reports whether s is an object id as git prints one: 40 or 64
// lower-case hex digits.
func validID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// closeBatches ends buildTree's long-running gits, once the trees it
// computed are written (the caller holds mu).
func (r *Repo) closeBatches() {
	r.pendingTrees.close(r)
	if r.hasher != nil {
		r.hasher.Close()
		r.hasher = nil
	}
}

// plainConfig fails with errNotBuilt when the repository's configuration
// makes git record files otherwise than buildTree does (core.fileMode or
// core.symlinks off, core.ignoreCase on). It asks git again only once
// forgetConfig forgot the answer.
func (r *Repo) plainConfig(ctx context.Context) error {
	if !r.config.read {
		out, err := r.git(ctx, nil, nil, "config", "-z", "--get-regexp", `^core\.(filemode|symlinks|ignorecase|sharedrepository)$`)
		var ge *git.Error
		if err != nil && !(errors.As(err, &ge) && ge.ExitCode() == 1) { // 1: none set
			return err
		}
		r.config.read, r.config.plain, r.config.shared = true, true, false
		for rec := range strings.SplitSeq(string(out), "\x00") {
			key, value, hasValue := strings.Cut(rec, "\n")
			b, ok := gitBool(value, hasValue)
			switch key {
			case "core.filemode", "core.symlinks":
				r.config.plain = r.config.plain && ok && b
			case "core.ignorecase":
				r.config.plain = r.config.plain && ok && !b
			case "core.sharedrepository":
				// Set, even to false: git gives the objects' files
				// modes of its own (looseTrees).
				r.config.shared = true
			}
		}
	}
	if !r.config.plain {
		return errNotPlain
	}
	return nil
}

// gitBool reads a configuration value as git reads a boolean: a key
// with no value (hasValue false) is true, then git's words for true and
// false; ok is false for anything else (git also reads numbers), which
// the caller takes as the configuration buildTree does not follow.
func gitBool(value string, hasValue bool) (b, ok bool) {
	if !hasValue {
		return true, true
	}
	switch strings.ToLower(value) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// looseTrees returns the object directory buildTree's trees are written
// into as loose objects, as git writes them (looseWriter), "" when git's
// mktree must write them: the objects live elsewhere than the common git
// directory says (GIT_OBJECT_DIRECTORY), or the repository is shared
// between users. Writing them here saves mktree its check of every
// entry's object (9 ms for a directory of 5,000 files). plainConfig has
// read the configuration.
func (r *Repo) looseTrees() string {
	if r.config.shared || os.Getenv("GIT_OBJECT_DIRECTORY") != "" {
		return ""
	}
	dir := filepath.Join(r.common, "objects")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// gitLike reports whether a part of the slash-separated path p is one git
// may refuse as a name of its own directory on some file system (".git"
// in another case or with trailing dots or spaces, "git~1"): update-index
// decides those.
func gitLike(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		l := strings.ToLower(part)
		if strings.HasPrefix(l, ".git") || strings.HasPrefix(l, "git~") {
			return true
		}
	}
	return false
}
