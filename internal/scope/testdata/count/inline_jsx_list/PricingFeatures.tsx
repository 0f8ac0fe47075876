export function PricingFeatures() {
  return (
    <div className="rounded-xl border p-8">
      <h3>Pro</h3>
      <p>Everything in Free, plus:</p>
      <ul className="space-y-2">
        <li>Unlimited projects</li>
        <li>Priority support (24/7, <strong>1h</strong> response)</li>
        <li>Custom domains, SSL & CDN</li>
        <li>Don't worry about [limits]</li>
        <li>Team roles</li>
      </ul>
      <a href="/signup">Start free trial</a>
    </div>
  );
}
