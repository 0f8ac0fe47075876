import * as content from './content'

export function TeamSection() {
  return (
    <section>
      <h2>{content.teamTitle}</h2>
      {content.team.map((p) => <Person key={p.name} {...p} />)}
    </section>
  )
}
