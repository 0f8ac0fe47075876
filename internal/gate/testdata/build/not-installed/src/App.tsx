import { motion } from 'framer-motion'
import { Anchor } from 'lucide-react'
import { HeroSection } from './sections/HeroSection'

export default function App() {
  return (
    <motion.main animate={{ opacity: 1 }}>
      <Anchor />
      <HeroSection />
    </motion.main>
  )
}
