import content from "./content.json";

export function FaqSection() {
  return (
    <dl>
      {content.faq.items.map((q) => (
        <div key={q.q}>
          <dt>{q.q}</dt>
          <dd>{q.a}</dd>
        </div>
      ))}
    </dl>
  );
}
