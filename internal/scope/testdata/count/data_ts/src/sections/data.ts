export interface Feature {
  title: string;
  body: string;
}

export const features: Feature[] = [
  { title: "Realtime sync", body: "Edits land everywhere in under 100ms." },
  { title: "Offline first", body: "Keep working on a plane; we'll merge later." },
  { title: "Audit log", body: "Who changed what, when, and why." },
  { title: "SSO", body: "SAML, OIDC, and SCIM provisioning." },
  { title: "Granular roles", body: "Owner, editor, commenter, viewer." },
  { title: "API", body: "REST + webhooks, rate-limited at 100 req/s." },
];

export const unrelated = ["a", "b"];
