export default function StatsSection() {
  const stats = [
    { label: 'Uptime', value: '99.99%' },
    { label: 'Requests / day', value: '1.2B' },
    { label: 'Countries', value: '140+' },
    { label: 'Median latency', value: '38ms' },
  ]

  return (
    <section className="grid grid-cols-2 md:grid-cols-4">
      {stats.map((s) => (
        <div key={s.label}>
          <p className="text-4xl font-bold">{s.value}</p>
          <p className="text-sm">{s.label}</p>
        </div>
      ))}
    </section>
  )
}
