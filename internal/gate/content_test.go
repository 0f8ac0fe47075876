package gate

import (
	"context"
	"strings"
	"testing"
)

const viteScaffold = `import { useState } from 'react'
import reactLogo from './assets/react.svg'
import viteLogo from '/vite.svg'
import './App.css'

function App() {
  const [count, setCount] = useState(0)

  return (
    <>
      <div>
        <a href="https://vite.dev" target="_blank">
          <img src={viteLogo} className="logo" alt="Vite logo" />
        </a>
        <a href="https://react.dev" target="_blank">
          <img src={reactLogo} className="logo react" alt="React logo" />
        </a>
      </div>
      <h1>Vite + React</h1>
      <div className="card">
        <button onClick={() => setCount((count) => count + 1)}>
          count is {count}
        </button>
        <p>
          Edit <code>src/App.tsx</code> and save to test HMR
        </p>
      </div>
      <p className="read-the-docs">
        Click on the Vite and React logos to learn more
      </p>
    </>
  )
}

export default App
`

// halfCleaned is the Vite scaffold with its headings deleted but the demo
// counter and logos kept.
const halfCleaned = `import { useState } from 'react'
import reactLogo from './assets/react.svg'
import viteLogo from '/vite.svg'

export default function App() {
  const [count, setCount] = useState(0)
  return (
    <main>
      <img src={viteLogo} alt="" />
      <button onClick={() => setCount((count) => count + 1)}>count is {count}</button>
    </main>
  )
}
`

const craScaffold = `import logo from './logo.svg';
import './App.css';

function App() {
  return (
    <div className="App">
      <header className="App-header">
        <img src={logo} className="App-logo" alt="logo" />
        <p>
          Edit <code>src/App.js</code> and save to reload.
        </p>
        <a className="App-link" href="https://reactjs.org" target="_blank" rel="noopener noreferrer">
          Learn React
        </a>
      </header>
    </div>
  );
}

export default App;
`

const nextScaffold = `import Image from "next/image";

export default function Home() {
  return (
    <div className="grid min-h-screen items-center justify-items-center">
      <main className="flex flex-col gap-8">
        <Image className="dark:invert" src="/next.svg" alt="Next.js logo" width={180} height={38} priority />
        <ol>
          <li>Get started by editing <code>src/app/page.tsx</code>.</li>
          <li>Save and see your changes instantly.</li>
        </ol>
      </main>
    </div>
  );
}
`

const realApp = `import { HeroSection } from './sections/HeroSection'
import { PricingSection } from './sections/PricingSection'

export default function App() {
  return (
    <main className="min-h-screen bg-background text-foreground">
      <HeroSection />
      <PricingSection />
    </main>
  )
}
`

func TestAppHasContent(t *testing.T) {
	section := map[string]string{"src/sections/HeroSection.tsx": "export function HeroSection() { return <section>Hi</section> }\n"}
	with := func(files map[string]string, more map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range files {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name   string
		files  map[string]string
		gate   AppHasContent
		status Status
		msg    string
	}{
		{"not a UI project", map[string]string{"main.go": "package main\n"}, AppHasContent{}, Skip, "not a UI project"},
		{"orchestration plan, no app", map[string]string{".ralph/plan.tsx": themelessPlan}, AppHasContent{}, Skip, "not a UI project"},
		{"sections but no entry", section, AppHasContent{}, Fail, "1 section file exist"},
		{"vite scaffold", map[string]string{"src/App.tsx": viteScaffold}, AppHasContent{}, Fail, "src/App.tsx is still the framework's starter page"},
		{"vite scaffold half cleaned", map[string]string{"src/App.tsx": halfCleaned}, AppHasContent{}, Fail, `"count is", "setCount`},
		{"create react app scaffold", map[string]string{"src/App.js": craScaffold}, AppHasContent{}, Fail, "starter page"},
		{"next scaffold", map[string]string{"src/app/page.tsx": nextScaffold}, AppHasContent{}, Fail, "Get started by editing"},
		{"real app", with(section, map[string]string{"src/App.tsx": realApp}), AppHasContent{}, Pass, "src/App.tsx renders the app"},
		{"a counter app may say count is", map[string]string{"src/App.tsx": "export default function App() {\n  const [count] = useState<number>(0)\n  return <p>The count is {count}</p>\n}\n"}, AppHasContent{}, Pass, "renders"},
		{"text only", map[string]string{"src/App.jsx": "export default () => <h1>Hello, shop</h1>\n"}, AppHasContent{}, Pass, "src/App.jsx"},
		{"expression child", map[string]string{"src/App.tsx": "const s = [1]\nexport default function App() {\n  return <main>{s.map((x) => x * 2)}</main>\n}\n"}, AppHasContent{}, Pass, "renders"},
		{"return null", map[string]string{"src/App.tsx": "export default function App() {\n  return null\n}\n"}, AppHasContent{}, Fail, "renders nothing"},
		{"empty fragment", map[string]string{"src/App.tsx": "export default function App() {\n  return <></>\n}\n"}, AppHasContent{}, Fail, "renders nothing"},
		{"empty div with generics and comments", map[string]string{"src/App.tsx": `import { useState } from 'react'
type Props = Record<string, Array<number>>
export default function App(_: Props) {
  const [x] = useState<string>('')
  if (x.length < 3 && x.length > 1) console.log(x)
  return (
    <div className="p-4" onClick={() => x.length > 0}>
      {/* TODO: render the sections */}
    </div>
  )
}
`}, AppHasContent{}, Fail, "renders nothing"},
		{"configured entry", map[string]string{"web/Main.tsx": realApp, "src/App.tsx": viteScaffold}, AppHasContent{Entry: []string{"web/Main.tsx"}}, Pass, "web/Main.tsx"},
		{"first default entry wins", map[string]string{"src/App.tsx": realApp, "src/app/page.tsx": nextScaffold}, AppHasContent{}, Pass, "src/App.tsx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tt.files {
				writeFile(t, root, rel, content)
			}
			r := tt.gate.Check(context.Background(), Env{Root: root})
			if r.Status != tt.status || !strings.Contains(r.Message, tt.msg) {
				t.Fatalf("got %s %q (fix %q), want %s containing %q", r.Status, r.Message, r.Fix, tt.status, tt.msg)
			}
			if r.Status == Fail && !strings.Contains(r.Fix, "src/sections/") {
				t.Errorf("fix %q does not say what to render", r.Fix)
			}
			if (&tt.gate).Name() != "app-has-content" {
				t.Error("name")
			}
		})
	}
}

func FuzzRendersSomething(f *testing.F) {
	for _, s := range []string{viteScaffold, halfCleaned, craScaffold, nextScaffold, realApp, "<", "<a", "<>", "<a/", "a<b>", "<a {'>'}>x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		rendersSomething(src)
		scaffoldMarkers(src)
	})
}
