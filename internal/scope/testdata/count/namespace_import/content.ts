export const teamTitle = 'Who we are'

export const team = [
  { name: 'Ada', role: 'Founder' },
  { name: 'Grace', role: 'Engineering' },
  { name: 'Alan', role: 'Research' },
  { name: 'Hedy', role: 'Hardware' },
  { name: 'Katherine', role: 'Data' },
]
