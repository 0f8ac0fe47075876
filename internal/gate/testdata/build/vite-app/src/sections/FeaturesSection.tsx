import { useState } from 'react'
import type { Feature } from '../types'

const features: Feature[] = [
  { title: 'Offline tables', body: 'A year of tides, even at sea.' },
  { title: 'Harbour alerts', body: 'Know when the bar is safe.' },
  { title: 'Moon phases', body: 'Springs and neaps at a glance.' },
]

export function FeaturesSection() {
  const [open, setOpen] = useState<number | null>(null)
  return (
    <section className="features">
      {features.map((f, i) => (
        <article key={f.title} onClick={() => setOpen(open === i ? null : i)}>
          <h3>{f.title}</h3>
          {open === i && <p>{f.body}</p>}
        </article>
      ))}
    </section>
  )
}
