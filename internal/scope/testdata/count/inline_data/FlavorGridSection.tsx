import { motion } from "framer-motion";
import type { Flavor } from "../types";

const flavors: Flavor[] = [
  { name: "Voltage Citrus", caffeine: 160, color: "var(--flavor-citrus)", tagline: "Sharp, bright, awake." },
  { name: "Chrome Berry", caffeine: 160, color: "var(--flavor-berry)", tagline: "Dark fruit, clean finish." },
  { name: "Static Mango", caffeine: 120, color: "var(--flavor-mango)", tagline: "Tropical, not sweet." },
  { name: "Ion Lime", caffeine: 160, color: "var(--flavor-lime)", tagline: "Tart & electric." },
  { name: "Surge Cherry", caffeine: 200, color: "var(--flavor-cherry)", tagline: "For the long shift." },
  { name: "Arc Grape", caffeine: 120, color: "var(--flavor-grape)", tagline: "Bold, [purple], loud." },
  { name: "Pulse Peach", caffeine: 80, color: "var(--flavor-peach)", tagline: "Soft start." },
  { name: "Flux Cola", caffeine: 160, color: "var(--flavor-cola)", tagline: "The classic, rewired." },
];

export function FlavorGridSection() {
  return (
    <section id="flavors" className="grid grid-cols-4 gap-6 px-8 py-24">
      <h2 className="col-span-4 text-4xl font-bold">Eight ways to stay sharp</h2>
      {flavors.map((flavor, i) => (
        <motion.article
          key={flavor.name}
          initial={{ opacity: 0, y: 24 }}
          animate={{ opacity: 1, y: 0 }}
          transition={{ delay: i * 0.05 }}
          className="rounded-2xl p-6"
          style={{ background: flavor.color }}
        >
          <h3 className="text-xl font-semibold">{flavor.name}</h3>
          <p className="text-sm opacity-80">{flavor.tagline}</p>
          <span className="text-xs uppercase">{flavor.caffeine}mg</span>
        </motion.article>
      ))}
    </section>
  );
}
