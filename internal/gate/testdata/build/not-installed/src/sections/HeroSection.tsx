import { Ship } from 'lucide-react'

export function HeroSection() {
  return (
    <section>
      <Ship />
      <h1>Harbour</h1>
    </section>
  )
}
