import { Button } from '#ui/Button'

export default function CtaSection() {
  return (
    <section id="download">
      <h2>Never miss a tide</h2>
      <Button href="https://example.com/tideline">Download</Button>
    </section>
  )
}
