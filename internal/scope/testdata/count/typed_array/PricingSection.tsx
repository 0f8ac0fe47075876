import type { ReactNode } from 'react'

type Tier = { name: string; price: number | null; perks: string[]; cta: ReactNode }

export const tiers: Array<{ name: string; price: number | null; perks: string[]; cta?: () => void }> = [
  { name: 'Starter', price: 0, perks: ['1 project', 'Community support'] },
  { name: 'Pro', price: 29, perks: ['Unlimited projects', 'Email support', 'Analytics'] },
  { name: 'Enterprise', price: null, perks: ['SSO', 'SLA', 'Dedicated CSM'] },
] satisfies Tier[] as const

export default function PricingSection(): JSX.Element {
  const highlighted = (t: Tier) => t.name === 'Pro'
  return (
    <div className="grid md:grid-cols-3">
      {tiers.map((t) => (
        <div key={t.name} className={highlighted(t) ? 'ring-2' : ''}>
          <h3>{t.name}</h3>
          <p>{t.price === null ? 'Contact us' : `$${t.price}/mo`}</p>
          <ul>{t.perks.map(p => <li key={p}>{p}</li>)}</ul>
        </div>
      ))}
    </div>
  )
}
