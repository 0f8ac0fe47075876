import type { Flavor } from '../types'

// Keep in sync with the product catalogue.
export const flavors: Flavor[] = [
  { id: 'citrus', name: 'Voltage Citrus', mood: 'day' },
  { id: 'berry', name: 'Chrome Berry', mood: 'day' },
  { id: 'mango', name: 'Static Mango', mood: 'day' },
  { id: 'lime', name: 'Ion Lime', mood: 'day' },
  { id: 'cherry', name: 'Surge Cherry', mood: 'day' },
  { id: 'grape', name: 'Arc Grape', mood: 'day' },
  { id: 'peach', name: 'Pulse Peach', mood: 'day' },
  { id: 'cola', name: 'Flux Cola', mood: 'day' },
  { id: 'moon', name: 'Moonlit Calm', mood: 'night' },
  { id: 'rest', name: 'Deep Rest', mood: 'night' },
]
