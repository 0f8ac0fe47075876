import { Check } from "lucide-react";
import { features } from "./data";

export default function FeaturesSection() {
  return (
    <section className="mx-auto max-w-5xl py-20">
      <h2 className="text-3xl font-bold">Why teams switch</h2>
      <ul className="mt-8 grid gap-4 sm:grid-cols-2">
        {features.map(({ title, body }) => (
          <li key={title} className="flex gap-3">
            <Check className="h-5 w-5 text-[var(--accent)]" />
            <div>
              <p className="font-medium">{title}</p>
              <p className="text-sm text-muted-foreground">{body}</p>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
