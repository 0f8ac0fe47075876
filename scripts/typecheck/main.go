// Command typecheck type-checks ralph, tests included, for other systems
// from source: build tags and per-system files are honoured as a build
// for GOOS/GOARCH would, but nothing is compiled, so every target of
// make test costs seconds instead of a cold build's minutes.
//
//	go run ./scripts/typecheck linux/arm64 darwin/amd64 windows/amd64 …
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: typecheck GOOS/GOARCH…")
		os.Exit(2)
	}
	failed := false
	for _, target := range os.Args[1:] {
		goos, goarch, ok := strings.Cut(target, "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "typecheck: %q is not GOOS/GOARCH\n", target)
			os.Exit(2)
		}
		n, errs, err := check(goos, goarch)
		if err != nil {
			fmt.Fprintf(os.Stderr, "typecheck %s: %v\n", target, err)
			os.Exit(1)
		}
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %s\n", target, e)
		}
		if len(errs) > 0 {
			failed = true
		}
		fmt.Printf("typecheck %s: %d packages, %d errors\n", target, n, len(errs))
	}
	if failed {
		os.Exit(1)
	}
}

// check loads ./... with its tests for goos/goarch and returns how many
// of ralph's packages it checked and every error in them or their
// dependencies.
func check(goos, goarch string) (int, []string, error) {
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedSyntax | packages.NeedTypes,
		Tests: true,
		Env:   append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, "./...", "./cmd/...")
	if err != nil {
		return 0, nil, err
	}
	var errs []string
	seen := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if msg := e.Error(); !seen[msg] {
				seen[msg] = true
				errs = append(errs, msg)
			}
		}
	})
	return len(pkgs), errs, nil
}
