package serve

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// redacted replaces a secret in pages and responses.
const redacted = "[redacted]"

// secretName matches the names of environment variables and ralph.toml
// settings that hold secrets.
var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential|auth|private|cookie|session)`)

// secretShapes match well-known API key formats wherever they appear,
// whether or not ralph knows the variable they came from.
var secretShapes = regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{16,}|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35}|glpat-[A-Za-z0-9_\-]{20,}`)

// minSecret is the shortest value treated as a secret: shorter values
// ("1", "true") would redact ordinary text.
const minSecret = 8

// Secrets returns the secret values ralph serve must never show: the
// values of environment variables whose names say they hold a key, token,
// password or the like, of the variables ralph.toml's api_key_env names,
// and of ralph.toml settings with such names.
func Secrets(environ []string, root string) []string {
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
	if data, err := os.ReadFile(filepath.Join(root, "ralph.toml")); err == nil {
		if toml.Unmarshal(data, &cfg) == nil {
			walkTOML(cfg, func(k, v string) {
				if k == "api_key_env" {
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

// NewScrubber returns a scrubber for values (and the well-known key
// shapes).
func NewScrubber(values []string) *Scrubber {
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
				pairs = append(pairs, f, redacted)
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

// String returns s with every secret replaced.
func (sc *Scrubber) String(s string) string {
	if len(sc.values) > 0 {
		s = sc.replacer.Replace(s)
	}
	return secretShapes.ReplaceAllString(s, redacted)
}

// Bytes returns b with every secret replaced.
func (sc *Scrubber) Bytes(b []byte) []byte {
	if len(sc.values) > 0 {
		for _, v := range sc.values {
			if bytes.Contains(b, []byte(v)) {
				b = []byte(sc.replacer.Replace(string(b)))
				break
			}
		}
	}
	return secretShapes.ReplaceAll(b, []byte(redacted))
}
