export const faqs = [
  { q: 'How much caffeine?', a: '80–200mg per can.' },
  { q: 'Is it vegan?', a: 'Yes.' },
  { q: 'Sugar?', a: 'Zero, sweetened with allulose.' },
  { q: 'Where do you ship?', a: 'US, EU, UK.' },
  { q: 'Subscriptions?', a: 'Monthly or bi-monthly, cancel any time.' },
]
