package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
)

// AppHasContent is the app-has-content gate (SPEC §9), defence in depth
// against an agent that builds sections and never shows them: the app's
// entry component exists, is no longer the framework's scaffold, and
// renders something.
//
// A project with no entry component and no section files is not a UI
// project: the gate skips.
type AppHasContent struct {
	// Entry lists the candidate entry components, slash-separated and
	// relative to the workspace root; the first that exists is checked.
	// Empty means DefaultEntries.
	Entry []string
}

// DefaultEntries are the entry components of Vite, Create React App and
// Next.js projects, in the order AppHasContent looks for them.
func DefaultEntries() []string {
	return []string{
		"src/App.tsx", "src/App.jsx", "src/App.js",
		"src/app/page.tsx", "src/app/page.jsx", "app/page.tsx", "app/page.jsx",
		"src/pages/index.tsx", "src/pages/index.jsx", "pages/index.tsx", "pages/index.jsx",
	}
}

// strongScaffoldMarkers are phrases only a framework's starter page contains;
// one is enough.
var strongScaffoldMarkers = []string{
	"Edit <code>src/App", "Edit src/App", "and save to test HMR", "and save to reload",
	"Click on the Vite and React logos", "Vite + React", "Get started by editing",
	"Learn React", "Learn Next.js",
}

// weakScaffoldMarkers are phrases a starter page contains but a real app
// might too; two are needed.
var weakScaffoldMarkers = []string{
	"count is", "setCount((count) => count + 1)", "vite.svg", "react.svg",
	"logo.svg", "App-logo", "next.svg", "vercel.svg", "reactLogo", "viteLogo",
	"Deploy now", "Read our docs",
}

// jsxComment matches a JSX comment child, {/* … */}.
var jsxComment = regexp.MustCompile(`\{\s*/\*[\s\S]*?\*/\s*\}`)

// Name returns "app-has-content".
func (*AppHasContent) Name() string { return "app-has-content" }

// MayWriteTree reports false: the gate only reads, in ralph's process.
func (*AppHasContent) MayWriteTree(Env) bool { return false }

// Check finds the entry component and looks at what it renders.
func (g *AppHasContent) Check(ctx context.Context, env Env) Result {
	entries := g.Entry
	if len(entries) == 0 {
		entries = DefaultEntries()
	}
	var entry string
	var src []byte
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(env.Root, filepath.FromSlash(e)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Result{Status: Fail, Message: fmt.Sprintf("cannot read the entry component %s: %v", e, err),
				Fix: fmt.Sprintf("Make %s a readable file.", e)}
		}
		entry, src = e, data
		break
	}
	if entry == "" {
		sections := sectionFiles(env.Root)
		if len(sections) == 0 {
			return Result{Status: Skip, Message: "no app entry component and no sections: not a UI project"}
		}
		return Result{Status: Fail,
			Message: fmt.Sprintf("%s exist but there is no entry component to render them (looked for %s)",
				countNoun(len(sections), "section file"), strings.Join(entries, ", ")),
			Fix: fmt.Sprintf("Create %s: import each section from %s/ and render them in the order of the plan.", entries[0], plan.SectionsDir)}
	}
	text := string(src)
	if ms := scaffoldMarkers(text); len(ms) > 0 {
		for i, m := range ms {
			ms[i] = strconv.Quote(m)
		}
		return Result{Status: Fail,
			Message: fmt.Sprintf("%s is still the framework's starter page (it contains %s)", entry, strings.Join(ms, ", ")),
			Fix:     fmt.Sprintf("Replace the starter content of %s with the app: import the sections from %s/ and render them in the order of the plan; remove the demo counter, logos and links.", entry, plan.SectionsDir)}
	}
	if !rendersSomething(text) {
		return Result{Status: Fail,
			Message: fmt.Sprintf("%s renders nothing: no components, no text, no expressions in its JSX", entry),
			Fix:     fmt.Sprintf("Make %s render the app: import the sections from %s/ and render each one, in the order of the plan.", entry, plan.SectionsDir)}
	}
	return Result{Status: Pass, Message: fmt.Sprintf("%s renders the app", entry)}
}

// sectionFiles lists the source files under src/sections/.
func sectionFiles(root string) []string {
	var out []string
	dir := filepath.Join(root, filepath.FromSlash(plan.SectionsDir))
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".tsx", ".jsx", ".ts", ".js":
			out = append(out, p)
		}
		return nil
	})
	return out
}

// scaffoldMarkers returns the scaffold phrases found in src: the first
// strong one, else the weak ones when there are two or more; nil when src
// does not look like a starter page.
func scaffoldMarkers(src string) []string {
	for _, m := range strongScaffoldMarkers {
		if strings.Contains(src, m) {
			return []string{m}
		}
	}
	var weak []string
	for _, m := range weakScaffoldMarkers {
		if strings.Contains(src, m) {
			weak = append(weak, m)
		}
	}
	if len(weak) >= 2 {
		return weak
	}
	return nil
}

// rendersSomething reports whether src's JSX shows anything: a component
// (a capitalised tag other than a fragment), a void element such as
// <img />, or an element or fragment with text or an expression inside.
// An empty <div></div>, <></> or return null shows nothing. It is a
// heuristic that leans towards yes: this gate is a second line of defence.
func rendersSomething(src string) bool {
	src = jsxComment.ReplaceAllString(src, "")
	for i := 0; i < len(src); i++ {
		if src[i] != '<' || i+1 >= len(src) {
			continue
		}
		next := src[i+1]
		isTag := next == '>' || jsxLetter(next)
		if !isTag || (i > 0 && jsxIdent(src[i-1])) {
			continue // a comparison, a closing tag, or a generic such as useState<T>
		}
		j := i + 1
		for j < len(src) && (jsxIdent(src[j]) || src[j] == '.' || src[j] == '-' || src[j] == ':') {
			j++
		}
		name := src[i+1 : j]
		end, selfClosing := tagEnd(src, j)
		if end < 0 {
			continue
		}
		if name != "" && name != "Fragment" && name != "React.Fragment" && jsxUpper(name[0]) {
			return true
		}
		if selfClosing {
			if name != "" {
				return true // <img />, <hr />, <input />
			}
			continue
		}
		k := end + 1
		for k < len(src) && src[k] != '<' {
			k++
		}
		if strings.TrimSpace(src[end+1:k]) != "" {
			return true
		}
		i = end
	}
	return false
}

// tagEnd returns the index of the '>' that closes the opening tag whose
// attributes start at i, skipping quoted strings and braced expressions,
// and whether the tag closes itself; -1 when it never closes.
func tagEnd(src string, i int) (int, bool) {
	depth := 0
	var quote byte
	for ; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' && depth > 0 {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			}
		case c == '>' && depth == 0:
			return i, i > 0 && src[i-1] == '/'
		case c == '<' && depth == 0:
			return -1, false // not a tag after all
		}
	}
	return -1, false
}

func jsxLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func jsxUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func jsxIdent(c byte) bool {
	return jsxLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '$'
}
