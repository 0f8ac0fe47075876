package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"
)

// Site serves a built app the way Vite's server does, from memory: the
// bundle's files first, then the project's public/ directory and its
// other files (never a hidden directory such as .git or .ralph), and
// the page for any other path without an extension (a client-side route).
type Site struct {
	// Files are the bundle's files by URL path ("/src/main.tsx").
	Files map[string][]byte
	// Page is the app's HTML page, served at / and client-side routes.
	Page []byte
	// Dir is the project root; "" serves nothing from disk.
	Dir string
}

// ServeHTTP serves one request.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := path.Clean("/" + r.URL.Path)
	w.Header().Set("Cache-Control", "no-store")
	if p == "/" || p == "/index.html" {
		s.page(w)
		return
	}
	if data, ok := s.Files[p]; ok {
		w.Header().Set("Content-Type", contentType(p))
		_, _ = w.Write(data)
		return
	}
	if s.Dir != "" && !hidden(p) {
		root, err := os.OpenRoot(s.Dir)
		if err == nil {
			defer root.Close()
			for _, name := range []string{"public" + p, strings.TrimPrefix(p, "/")} {
				if data, err := fs.ReadFile(root.FS(), name); err == nil {
					w.Header().Set("Content-Type", contentType(p))
					_, _ = w.Write(data)
					return
				}
			}
		}
	}
	if path.Ext(p) == "" {
		s.page(w)
		return
	}
	if p == "/favicon.ico" {
		// The browser asks for it by itself; its absence is no error of the app's.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.NotFound(w, r)
}

func (s *Site) page(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(s.Page)
}

// hidden reports whether p has a segment starting with a dot.
func hidden(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// contentType is the type a browser needs: a bundled script is served
// under its source's name (/src/main.tsx), so scripts are named here.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".js", ".mjs", ".ts", ".tsx", ".jsx", ".mts":
		return "text/javascript; charset=utf-8"
	case ".map":
		return "application/json"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Serve serves h on a loopback port until stop is called; base is its
// URL without a trailing slash.
func Serve(ctx context.Context, h http.Handler) (base string, stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("serve the app: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		<-done
	}, nil
}

// InjectStyles returns page with a stylesheet link for each href before
// </head> (or at the start when it has no head).
func InjectStyles(page []byte, hrefs []string) []byte {
	if len(hrefs) == 0 {
		return page
	}
	var links bytes.Buffer
	for _, h := range hrefs {
		fmt.Fprintf(&links, "<link rel=\"stylesheet\" href=\"%s\">\n", html.EscapeString(h))
	}
	if i := bytes.Index(bytes.ToLower(page), []byte("</head>")); i >= 0 {
		return append(append(append([]byte{}, page[:i]...), links.Bytes()...), page[i:]...)
	}
	return append(links.Bytes(), page...)
}
