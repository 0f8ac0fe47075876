import { HeroSection } from './sections/HeroSection'
import { FeaturesSection } from '@/sections/FeaturesSection'
import { PricingSection } from './sections/PricingSection'
import { CtaSection } from './sections/CtaSection'

export default function App() {
  return (
    <main>
      <HeroSection />
      <FeaturesSection />
      <PricingSection />
      <CtaSection />
    </main>
  )
}
