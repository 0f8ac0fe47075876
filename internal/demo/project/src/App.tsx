import './index.css'

// The starting scaffold: ralph's app-has-content gate knows this page and
// will not let the task finish until the plan's sections replace it.
export default function App() {
  return (
    <main>
      <h1>Vite + React</h1>
      <p>Edit src/App.tsx and save to test HMR</p>
    </main>
  )
}
