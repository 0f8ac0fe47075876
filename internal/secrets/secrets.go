// Package secrets finds the secret values a process knows (its
// environment's keys and tokens, ralph.toml's) and scrubs them, and the
// well-known API key shapes, from text before it is stored, logged,
// printed or served.
package secrets

import (
	"bytes"
	"encoding/json"
	"html/template"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Redacted replaces a secret.
const Redacted = "[redacted]"

// secretName matches the names of environment variables and ralph.toml
// settings that hold secrets.
var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential|auth|private|cookie|session)`)

// secretShapes match well-known API key formats wherever they appear,
// whether or not ralph knows the variable they came from. The lengths are
// the least that is no ordinary word, so a key cut short still matches;
// a shape inside a word ("task-management-…") is none.
var secretShapes = regexp.MustCompile(`\b(?:sk-ant-[A-Za-z0-9_\-]{6,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{12,}|github_pat_[A-Za-z0-9_]{12,}|A[KS]IA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{20,}|glpat-[A-Za-z0-9_\-]{12,})|-----BEGIN [A-Z ]*PRIVATE KEY-----`)

// shapeMarks are literals of which every match of secretShapes holds
// one: text without any has no key shape, and is not searched with the
// expression (which costs more than the rest of recording an event).
var shapeMarks = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "xox", "AIza", "glpat-", "-----BEGIN "}

// scrubShapes replaces the key shapes in s.
func scrubShapes(s string) string {
	for _, m := range shapeMarks {
		if strings.Contains(s, m) {
			return secretShapes.ReplaceAllString(s, Redacted)
		}
	}
	return s
}

// minSecret is the shortest value treated as a secret: shorter values
// ("1", "true") would redact ordinary text.
const minSecret = 8

// Values returns the secret values never to show: the
// values of environment variables whose names say they hold a key, token,
// password or the like, of the variables ralph.toml's
// api_key_env, token_env and secret_env name (any *_env setting with
// such a name), and of ralph.toml settings with such names.
func Values(environ []string, root string) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret {
			out = append(out, v)
		}
	}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		env[k] = v
		if secretName.MatchString(k) {
			add(v)
		}
	}
	var cfg map[string]any
	if data, err := os.ReadFile(filepath.Join(root, "ralph.toml")); root != "" && err == nil {
		if toml.Unmarshal(data, &cfg) == nil {
			walkTOML(cfg, func(k, v string) {
				if strings.HasSuffix(k, "_env") && secretName.MatchString(k) {
					add(env[v])
				} else if secretName.MatchString(k) && !strings.HasSuffix(k, "_env") {
					add(v)
				}
			})
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func walkTOML(v any, fn func(key, value string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				fn(k, s)
				continue
			}
			walkTOML(e, fn)
		}
	case []any:
		for _, e := range x {
			walkTOML(e, fn)
		}
	case []map[string]any:
		for _, e := range x {
			walkTOML(e, fn)
		}
	}
}

// Scrubber replaces secrets in text.
type Scrubber struct {
	values   []string
	replacer *strings.Replacer
}

// New returns a scrubber for values (and the well-known key shapes).
func New(values []string) *Scrubber {
	// Longest first, so a secret that contains another is replaced whole.
	vs := slices.Clone(values)
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	// Each secret is also looked for in the forms the page and the JSON
	// escape it to, in case it holds characters they escape.
	var pairs, forms []string
	for _, v := range vs {
		if len(v) < minSecret {
			continue
		}
		for _, f := range escapedForms(v) {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
				pairs = append(pairs, f, Redacted)
			}
		}
	}
	return &Scrubber{values: forms, replacer: strings.NewReplacer(pairs...)}
}

// escapedForms returns v as it is and as HTML text, a JSON string and a
// URL query escape it.
func escapedForms(v string) []string {
	out := []string{v}
	var b strings.Builder
	if htmlText.Execute(&b, v) == nil {
		out = append(out, b.String())
	}
	if j, err := json.Marshal(v); err == nil {
		out = append(out, strings.Trim(string(j), `"`))
	}
	out = append(out, url.QueryEscape(v), url.PathEscape(v))
	return out
}

var htmlText = template.Must(template.New("t").Parse(`{{.}}`))

// ForProcess returns the scrubber of this process's secrets: those of
// its environment and, when root is not empty, of root's ralph.toml.
func ForProcess(root string) *Scrubber { return New(Values(os.Environ(), root)) }

// String returns s with every secret replaced.
func (sc *Scrubber) String(s string) string {
	if sc != nil && len(sc.values) > 0 {
		s = sc.replacer.Replace(s)
	}
	return scrubShapes(s)
}

// Bytes returns b with every secret replaced.
func (sc *Scrubber) Bytes(b []byte) []byte {
	if sc != nil && len(sc.values) > 0 {
		for _, v := range sc.values {
			if bytes.Contains(b, []byte(v)) {
				b = []byte(sc.replacer.Replace(string(b)))
				break
			}
		}
	}
	for _, m := range shapeMarks {
		if bytes.Contains(b, []byte(m)) {
			return secretShapes.ReplaceAll(b, []byte(Redacted))
		}
	}
	return b
}

// Writer returns a writer that scrubs each write before passing it to w.
// A secret split across two writes is missed, so it suits writers that
// take a line or a record at a time (loggers, progress reporters).
func Writer(w io.Writer, sc *Scrubber) io.Writer { return &writer{w: w, sc: sc} }

type writer struct {
	w  io.Writer
	sc *Scrubber
}

func (x *writer) Write(p []byte) (int, error) {
	if _, err := x.w.Write(x.sc.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// filePatterns match the base names of files that usually hold secrets.
var filePatterns = []string{
	".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*_rsa", "*_dsa", "*_ecdsa", "*_ed25519", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
	"credentials", "credentials.*", "*.token", "secrets.*", ".htpasswd",
}

// IsFile reports whether path (slash- or OS-separated) names a file that
// usually holds secrets: .env files, private keys, credential stores.
func IsFile(path string) bool {
	base := strings.ToLower(filepath.Base(filepath.FromSlash(path)))
	for _, p := range filePatterns {
		if ok, _ := filepath.Match(p, base); ok {
			return true
		}
	}
	return false
}
