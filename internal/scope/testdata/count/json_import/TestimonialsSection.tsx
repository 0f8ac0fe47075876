import testimonials from './testimonials.json'
import { Star } from 'lucide-react'

export function TestimonialsSection() {
  return (
    <section>
      {testimonials.map((t) => (
        <figure key={t.author}>
          <div className="flex">
            {Array.from({ length: t.stars }).map((_, i) => <Star key={i} />)}
          </div>
          <blockquote>{t.quote}</blockquote>
          <figcaption>{t.author}</figcaption>
        </figure>
      ))}
    </section>
  )
}
