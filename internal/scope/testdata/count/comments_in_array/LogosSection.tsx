const logos = [
  // Tier 1 customers
  { src: "/logos/acme.svg", alt: "Acme" },
  { src: "/logos/globex.svg", alt: "Globex" }, // renewed 2024
  /* { src: "/logos/initech.svg", alt: "Initech" }, -- churned */
  { src: "/logos/umbrella.svg", alt: "Umbrella" },
  // { src: "/logos/hooli.svg", alt: "Hooli" },
  { src: "/logos/stark.svg", alt: "Stark, Industries" },
  {
    src: "/logos/wayne.svg",
    alt: "Wayne", // trailing comma below
  },
];

export function LogosSection() {
  return (
    <div className="flex flex-wrap items-center justify-center gap-10 opacity-70">
      {logos.map((logo) => (
        <img key={logo.alt} src={logo.src} alt={logo.alt} className="h-8" />
      ))}
    </div>
  );
}
