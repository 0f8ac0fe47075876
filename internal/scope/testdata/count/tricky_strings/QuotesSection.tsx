const pattern = /[\[\],{}]+/g;

const quotes = [
  { text: "Fast, cheap, good: pick [three].", author: 'Someone, Somewhere' },
  { text: 'It\'s {not} a bug, it\'s a feature], really', author: "Anon" },
  { text: `Multi-line,
    template [with] ${"nested, {braces}"} and ${`inner ${1 + [2, 3].length}`}`, author: "T. Literal" },
  { text: "Escaped \"quotes\", and a // not-a-comment", author: "/* not a comment */" },
];

export function QuotesSection() {
  const clean = (s: string) => s.replace(pattern, "");
  return (
    <blockquote>
      {quotes.map((q) => (
        <p key={q.author}>
          “{clean(q.text)}” — {q.author}, [{"}"}]
        </p>
      ))}
    </blockquote>
  );
}
