const integrations = ["Slack", "GitHub", "Linear", "Notion", "Figma", "Stripe, Inc."] as const;

export function IntegrationsSection() {
  return (
    <div className="flex flex-wrap gap-2">
      {integrations.map((name) => (
        <span key={name} className="badge">
          {name}
        </span>
      ))}
    </div>
  );
}
