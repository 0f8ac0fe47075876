import { useState } from 'react'

interface Todo { id: number; text: string; done: boolean }

export function TodoSection() {
  const [todos, setTodos] = useState<Todo[]>([
    { id: 1, text: 'Write spec', done: true },
    { id: 2, text: 'Build it', done: false },
    { id: 3, text: 'Ship it', done: false },
  ])
  const toggle = (id: number) => setTodos(ts => ts.map(t => t.id === id ? { ...t, done: !t.done } : t))
  return (
    <ul>
      {todos.map(t => <li key={t.id} onClick={() => toggle(t.id)}>{t.text}</li>)}
    </ul>
  )
}
