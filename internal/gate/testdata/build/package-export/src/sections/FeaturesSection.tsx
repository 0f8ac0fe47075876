import { useState, useTransition } from 'react'
import type { Feature } from '../types'

const features: Feature[] = [
  { title: 'Offline tables', body: 'A year of tides, even at sea.' },
]

export function FeaturesSection() {
  const [open, setOpen] = useState<number | null>(null)
  const [, startTransition] = useTransition()
  return (
    <section className="features">
      {features.map((f, i) => (
        <article key={f.title} onClick={() => startTransition(() => setOpen(open === i ? null : i))}>
          <h3>{f.title}</h3>
        </article>
      ))}
    </section>
  )
}
