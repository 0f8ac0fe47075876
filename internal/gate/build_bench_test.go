package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeLargeApp writes a Vite + React + TypeScript app with n section
// components into dir: index.html, src/main.tsx, an App.tsx that renders
// every section, each section with data, state, a shared UI component
// through a tsconfig path alias and a CSS module-style import, and
// hand-made react and react-dom packages in node_modules.
func writeLargeApp(tb testing.TB, dir string, n int) {
	tb.Helper()
	copyTree(tb, filepath.Join("testdata", "build", "vite-app", "node_modules"), filepath.Join(dir, "node_modules"))
	files := map[string]string{
		"index.html":    "<!doctype html>\n<div id=\"root\"></div>\n<script type=\"module\" src=\"/src/main.tsx\"></script>\n",
		"tsconfig.json": `{"compilerOptions": {"jsx": "react-jsx", "baseUrl": ".", "paths": {"@/*": ["./src/*"]}}}`,
		"src/main.tsx":  "import { StrictMode } from 'react'\nimport { createRoot } from 'react-dom/client'\nimport './index.css'\nimport App from './App'\n\ncreateRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>)\n",
		"src/index.css": ":root { --background: oklch(0.98 0.01 220); }\nbody { margin: 0; }\n",
		"src/ui/Card.tsx": "import type { ReactNode } from 'react'\n\nexport function Card({ title, children }: { title: string; children: ReactNode }) {\n" +
			"  return <article className=\"card\"><h3>{title}</h3>{children}</article>\n}\n",
	}
	var imports, uses strings.Builder
	for i := range n {
		name := fmt.Sprintf("Section%03d", i)
		imports.WriteString(fmt.Sprintf("import { %s } from './sections/%s'\n", name, name))
		uses.WriteString(fmt.Sprintf("      <%s />\n", name))
		files["src/sections/"+name+".css"] = fmt.Sprintf(".section-%d { padding: %drem; }\n", i, i%5+1)
		files["src/sections/"+name+".tsx"] = fmt.Sprintf(`import { useState } from 'react'
import { Card } from '@/ui/Card'
import './%[1]s.css'

interface Item {
  title: string
  body: string
}

const items: Item[] = [
  { title: 'First of %[1]s', body: 'The first item.' },
  { title: 'Second of %[1]s', body: 'The second item.' },
  { title: 'Third of %[1]s', body: 'The third item.' },
]

export function %[1]s() {
  const [open, setOpen] = useState<number | null>(null)
  return (
    <section className="section-%[2]d">
      <h2>%[1]s</h2>
      {items.map((item, i) => (
        <Card key={item.title} title={item.title}>
          <button onClick={() => setOpen(open === i ? null : i)}>more</button>
          {open === i && <p>{item.body}</p>}
        </Card>
      ))}
    </section>
  )
}
`, name, i)
	}
	files["src/App.tsx"] = imports.String() + "\nexport default function App() {\n  return (\n    <main>\n" + uses.String() + "    </main>\n  )\n}\n"
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkBuildSucceeds200 runs the build-succeeds gate on a generated
// 200-component app and reports milliseconds per run (bench/buildgate.sh
// prints it; the goal is under 300 ms).
func BenchmarkBuildSucceeds200(b *testing.B) {
	dir := b.TempDir()
	writeLargeApp(b, dir, 200)
	g := &BuildSucceeds{OptIn: true}
	ctx := context.Background()
	if r := g.Check(ctx, Env{Root: dir}); r.Status != Pass || !strings.Contains(r.Message, "(407 files)") {
		b.Fatalf("the generated app does not build: %s\n%s", r.Status, r.Message)
	}
	b.ResetTimer()
	start, runs := time.Now(), 0
	for b.Loop() {
		if r := g.Check(ctx, Env{Root: dir}); r.Status != Pass {
			b.Fatalf("%s: %s", r.Status, r.Message)
		}
		runs++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(runs), "ms/op")
}
