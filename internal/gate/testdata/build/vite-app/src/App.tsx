import { HeroSection } from './sections/HeroSection'
import { FeaturesSection } from '@/sections/FeaturesSection'
import { CtaSection } from './sections/CtaSection'

export default function App() {
  return (
    <main>
      <HeroSection />
      <FeaturesSection />
      <CtaSection />
    </main>
  )
}
