import wave from '../assets/wave.png'
import { Button } from '#ui/Button'

export function HeroSection() {
  return (
    <section className="hero">
      <img src={wave} alt="" />
      <h1>Tideline</h1>
      <p>Tide tables for every harbour, on your phone.</p>
      <Button href="#download">Get the app</Button>
    </section>
  )
}
