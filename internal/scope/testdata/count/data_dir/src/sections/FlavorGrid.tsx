import { flavors as allFlavors } from '../data/flavors'
import FlavorCard from './FlavorCard'

export const FlavorGrid = () => (
  <div className="grid grid-cols-5 gap-4">
    {allFlavors.map(f => <FlavorCard key={f.id} flavor={f} />)}
  </div>
)
