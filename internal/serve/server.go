// Package serve is ralph's web dashboard (ralph serve): the workspace's
// run history, live event stream, gates, plan, snapshots and spec pipeline
// as pages and as a JSON API, with approve, reject, stop and rollback.
//
// It reads the store another process writes and makes only the writes
// ralph approve, reject, stop and snapshot rollback make. Live updates
// reach the browser by Server-Sent Events, woken by the writer's writes
// to the store's WAL (fsnotify) and confirmed by SQLite's data_version. Templates, the stylesheet and the small script are
// embedded; there is no build step.
//
// Security: every request to a non-loopback address needs the access
// token, or the read-only cookie opening the printed URL leaves; on
// loopback reads are open and every mutation needs the token, as an
// Authorization: Bearer header, from the same origin. Values of secrets
// found in the environment and ralph.toml are scrubbed from every page
// and response (the run scrubs its own before they are stored), and the
// file view shows only files of a snapshot's diff.
package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// TokenFile is the name, under .ralph/, of the file ralph serve writes
// its access token to.
const TokenFile = workspace.ServeToken

// StatusFunc builds what ralph status --json prints, for GET /api/status.
type StatusFunc func(ctx context.Context, ws *workspace.Workspace, st *store.Store) (any, error)

// Options configure a Server.
type Options struct {
	// Workspace is the workspace served.
	Workspace *workspace.Workspace
	// Token is the access token; NewToken makes one.
	Token string
	// TokenFile is the file the token is kept in, never shown by the
	// file view wherever it lives.
	TokenFile string
	// Loopback is true when the server listens only on a loopback
	// address: then reads need no token.
	Loopback bool
	// Status builds GET /api/status; nil serves the overview's data.
	Status StatusFunc
	// Specs builds the spec pipeline's table; nil shows the store's
	// records.
	Specs SpecsFunc
	// Remote, when set, is the runs the workspace submitted elsewhere
	// (Temporal workflows): the overview lists them, answers and stop
	// requests go to them, and the pages about this checkout's own runs
	// say they do not apply.
	Remote Remote
	// RemotePoll is how often Remote is asked for its runs; 0 means 1s.
	RemotePoll time.Duration
	// Secrets are values never to show (see secrets.Values).
	Secrets []string
	// Poll is how often the store is checked for changes the file watch
	// did not report; 0 means 100ms, and at least 1s while the watch
	// works.
	Poll time.Duration
	// Logger receives the server's diagnostics.
	Logger *slog.Logger
}

// Server serves one workspace's dashboard.
type Server struct {
	opt   Options
	ws    *workspace.Workspace
	pages map[string]*template.Template
	scrub *secrets.Scrubber
	hub   *hub
	// changes caches the tasks' diff stats.
	changes changeCache
	// replays holds a slot for each stream reading a page of backlog.
	replays chan struct{}
	// tail is the newest events as the last stream to read them found
	// them, for the others woken by the same commit.
	tail   tailCache
	cop    *http.CrossOriginProtection
	log    *slog.Logger
	mu     sync.Mutex
	st     *store.Store
	closed bool
	// lastRuns is the remote's runs as last published, as JSON.
	lastRuns string
	// prev serves the app for the Preview page, once it is asked for.
	prev *preview
}

// NewToken returns a random 128-bit token, hex-encoded.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// IsLoopback reports whether addr (host:port) names only loopback
// interfaces: "localhost", 127.0.0.0/8 or ::1. An empty host (every
// interface) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// New returns a server for opt.Workspace. It opens the store when the
// database exists; otherwise it serves an empty state until a run
// creates it.
func New(opt Options) (*Server, error) {
	if opt.Workspace == nil {
		return nil, errors.New("serve: no workspace")
	}
	if len(opt.Token) < 16 {
		return nil, errors.New("serve: the access token is too short")
	}
	if opt.Poll <= 0 {
		opt.Poll = 100 * time.Millisecond
	}
	if opt.RemotePoll <= 0 {
		opt.RemotePoll = time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opt:     opt,
		ws:      opt.Workspace,
		pages:   pages,
		scrub:   secrets.New(opt.Secrets),
		hub:     newHub(),
		replays: make(chan struct{}, maxReplays),
		changes: changeCache{done: map[int]taskChange{}, live: map[int]liveChange{}, trees: map[string]snapshot.DiffStat{}},
		cop:     http.NewCrossOriginProtection(),
		log:     opt.Logger.With("component", "serve"),
	}
	s.tail.render = s.writeEventMessage
	return s, nil
}

// Close closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.prev != nil {
		s.prev.close()
	}
	if s.st != nil {
		err := s.st.Close()
		s.st = nil
		return err
	}
	return nil
}

// errNoDatabase means no run has created the database yet.
var errNoDatabase = errors.New("no ralph run in this workspace yet (start one with `ralph run \"message\"`)")

// store returns the open store, opening it when the database has appeared
// since; errNoDatabase when it has not.
func (s *Server) store(ctx context.Context) (*store.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		return s.st, nil
	}
	if s.closed {
		return nil, errors.New("serve: closed")
	}
	if _, err := os.Stat(s.ws.Path(workspace.Database)); err != nil {
		return nil, errNoDatabase
	}
	st, err := store.Open(ctx, s.ws.Path(workspace.Database))
	if err != nil {
		return nil, err
	}
	s.st = st
	return st, nil
}

// Handler returns the dashboard's handler: pages, static files and the
// API, behind the access rules.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	// Pages.
	mux.HandleFunc("GET /{$}", s.pageOverview)
	mux.HandleFunc("GET /events", s.localPage("events", "Events", s.pageEvents))
	mux.HandleFunc("GET /gates", s.localPage("gates", "Gates", s.pageGates))
	mux.HandleFunc("GET /plan", s.localPage("plan", "Plan", s.pagePlan))
	mux.HandleFunc("GET /approvals", s.localPage("approvals", "Approvals", s.pageApprovals))
	mux.HandleFunc("GET /snapshots", s.localPage("snapshots", "Snapshots", s.pageSnapshots))
	mux.HandleFunc("GET /snapshots/{name}", s.localPage("snapshots", "Snapshots", s.pageSnapshotDiff))
	mux.HandleFunc("GET /snapshots/{name}/file", s.localPage("snapshots", "Snapshots", s.pageSnapshotFile))
	mux.HandleFunc("GET /snapshots/{name}/rollback", s.localPage("snapshots", "Roll back", s.pageRollback))
	mux.HandleFunc("GET /iterations/{task}/{n}", s.localPage("events", "Iteration", s.pageIterationDiff))
	mux.HandleFunc("GET /specs", s.localPage("specs", "Specs", s.pageSpecs))
	mux.HandleFunc("GET /specs/log", s.localPage("specs", "Specs", s.pageSpecLog))
	mux.HandleFunc("GET /preview", s.localPage("preview", "Preview", s.pagePreview))
	mux.HandleFunc("GET /preview/shots/{name}", s.previewShot)
	mux.HandleFunc("GET /preview/history/{dir}/{name}", s.previewShot)
	mux.HandleFunc("GET /fragment/{name}", s.fragment)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(mustSub(assets, "static"))))
	// API.
	mux.HandleFunc("GET /api/status", s.apiStatus)
	mux.HandleFunc("GET /api/events", s.localAPI(s.apiEvents))
	mux.HandleFunc("GET /api/events/stream", s.apiStream)
	mux.HandleFunc("GET /api/pending", s.apiPending)
	mux.HandleFunc("POST /api/pending/{id}/approve", s.apiAnswer(store.HumanApproved))
	mux.HandleFunc("POST /api/pending/{id}/reject", s.apiAnswer(store.HumanRejected))
	mux.HandleFunc("POST /api/stop", s.apiStop)
	mux.HandleFunc("GET /api/snapshots", s.localAPI(s.apiSnapshots))
	mux.HandleFunc("GET /api/snapshots/{name}/diff", s.localAPI(s.apiSnapshotDiff))
	mux.HandleFunc("POST /api/snapshots/{name}/rollback", s.localAPI(s.apiRollback))
	mux.HandleFunc("GET /api/specs", s.localAPI(s.apiSpecs))
	mux.HandleFunc("GET /api/preview", s.localAPI(s.apiPreview))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		data, _ := assets.ReadFile("static/favicon.svg")
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(mux, r); allow != "" {
			w.Header().Set("Allow", allow)
			s.jsonError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+" is not allowed (allowed: "+allow+")")
			return
		}
		s.jsonError(w, http.StatusNotFound, "no such API endpoint: "+r.Method+" "+r.URL.Path)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(mux, r); allow != "" {
			w.Header().Set("Allow", allow)
			s.htmlError(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed at "+r.URL.Path+" (allowed: "+allow+").")
			return
		}
		s.htmlError(w, r, http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	})
	return s.guard(mux)
}

// allowed returns the methods mux serves r's path with, other than by a
// catch-all ("GET, HEAD", "POST"); "" when there is none.
func allowed(mux *http.ServeMux, r *http.Request) string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		c := r.Clone(r.Context())
		c.Method = m
		if _, pat := mux.Handler(c); pat != "" && pat != "/" && pat != "/api/" {
			out = append(out, m)
			if m == http.MethodGet {
				out = append(out, http.MethodHead)
			}
		}
	}
	return strings.Join(out, ", ")
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// guard applies the access rules to every request.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-src 'self' http://127.0.0.1:*; frame-ancestors 'none'")
		api := strings.HasPrefix(r.URL.Path, "/api/")
		// A loopback server answers only to loopback host names, so a
		// web page cannot reach it by rebinding its own name's DNS.
		if s.opt.Loopback && !IsLoopback(r.Host) {
			s.deny(w, r, api, http.StatusMisdirectedRequest, "this dashboard answers only on a loopback host name (127.0.0.1, localhost or [::1])")
			return
		}
		mutation := r.Method != http.MethodGet && r.Method != http.MethodHead
		if mutation {
			if err := s.cop.Check(r); err != nil {
				s.deny(w, r, api, http.StatusForbidden, "cross-origin request refused")
				return
			}
			if !s.bearer(r) {
				s.deny(w, r, api, http.StatusUnauthorized, "this action needs the access token (Authorization: Bearer TOKEN; ralph serve printed it and wrote it to .ralph/serve.token)")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && s.valid(q) {
			// The printed URL carries the token. The browser keeps a
			// cookie that lets it read (a browser sends a loopback
			// cookie to every port of the host, so it is named for
			// this dashboard and is not the token); the page's script
			// keeps the token itself, for actions, from the address's
			// fragment, which no request and no Referer carries.
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.readCredential(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if !api {
				u := *r.URL
				v := u.Query()
				v.Del("token")
				u.RawQuery = v.Encode()
				to := u.RequestURI()
				if strings.HasPrefix(to, "//") || strings.HasPrefix(to, "/\\") {
					to = "/" // never a redirect to another host
				}
				http.Redirect(w, r, to+"#token="+url.QueryEscape(q), http.StatusSeeOther)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), authKey{}, true))
		} else if s.bearer(r) {
			r = r.WithContext(context.WithValue(r.Context(), authKey{}, true))
		} else if s.cookie(r) {
			r = r.WithContext(context.WithValue(r.Context(), authKey{}, false))
		} else if !s.opt.Loopback {
			s.deny(w, r, api, http.StatusUnauthorized, "this dashboard needs the access token: open the URL ralph serve printed (the token is also in .ralph/serve.token)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authKey holds, in a request's context, true when the request carried
// the token itself and false when it carried only the read cookie.
type authKey struct{}

// authed reports whether the request carried the token or the read
// cookie: it is someone who opened the printed URL.
func authed(r *http.Request) bool {
	_, ok := r.Context().Value(authKey{}).(bool)
	return ok
}

// carriedToken reports whether the request carried the token itself, so
// the page may hand it to its script.
func carriedToken(r *http.Request) bool {
	v, _ := r.Context().Value(authKey{}).(bool)
	return v
}

// cookieName is the read cookie's name, bound to this dashboard's token
// so two dashboards on one host keep a cookie each.
func (s *Server) cookieName() string {
	sum := sha256.Sum256([]byte("ralph serve cookie name\x00" + s.opt.Token))
	return "ralph_" + hex.EncodeToString(sum[:6])
}

// readCredential is the read cookie's value: derived from the token, it
// lets a browser read, and cannot act or be turned back into the token.
func (s *Server) readCredential() string {
	m := hmac.New(sha256.New, []byte(s.opt.Token))
	m.Write([]byte("ralph serve read cookie"))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) valid(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.Token)) == 1
}

func (s *Server) bearer(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.valid(strings.TrimSpace(tok))
}

func (s *Server) cookie(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.readCredential())) == 1
}

func (s *Server) deny(w http.ResponseWriter, r *http.Request, api bool, code int, msg string) {
	if api || r.Method != http.MethodGet {
		s.jsonError(w, code, msg)
		return
	}
	s.htmlError(w, r, code, msg)
}

// writeJSON writes v as JSON, with secrets scrubbed.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		s.jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(s.scrub.Bytes(append(b, '\n')))
}

// apiError is the body of every API error.
type apiError struct {
	Error string `json:"error"`
	PID   int    `json:"pid,omitempty"`
}

func (s *Server) jsonError(w http.ResponseWriter, code int, msg string) {
	s.writeJSON(w, code, apiError{Error: msg})
}

// apiFail logs err and answers 500, or 503 while there is no database
// yet.
func (s *Server) apiFail(w http.ResponseWriter, err error) {
	if errors.Is(err, errNoDatabase) {
		s.jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.log.Error("request failed", "err", err)
	s.jsonError(w, http.StatusInternalServerError, err.Error())
}

// SelfURL returns the dashboard's URL, with the token when there is one,
// for the address it listens on (127.0.0.1 for an address on every
// interface).
func SelfURL(addr net.Addr, token string) string {
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
	}
	return tokenURL(host, token)
}

func tokenURL(host, token string) string {
	u := &url.URL{Scheme: "http", Host: host, Path: "/"}
	if token != "" {
		u.RawQuery = "token=" + token
	}
	return u.String()
}

// SelfURLs returns the URLs another machine can open the dashboard at:
// one per address of the host's interfaces that is not loopback when it
// listens on every interface, else the one it listens on.
func SelfURLs(addr net.Addr, token string) []string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return []string{SelfURL(addr, token)}
	}
	ifaces, _ := net.InterfaceAddrs()
	return lanURLs(ifaces, ta, token)
}

func lanURLs(ifaces []net.Addr, ta *net.TCPAddr, token string) []string {
	var out []string
	for _, a := range ifaces {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || n.IP.IsMulticast() {
			continue
		}
		if ta.IP.To4() != nil && n.IP.To4() == nil {
			continue // 0.0.0.0 listens on IPv4 only
		}
		out = append(out, tokenURL(net.JoinHostPort(n.IP.String(), fmt.Sprint(ta.Port)), token))
	}
	if len(out) == 0 {
		return []string{SelfURL(ta, token)}
	}
	return out
}
