const dayFlavors = [
  { name: "Voltage Citrus" }, { name: "Chrome Berry" }, { name: "Static Mango" }, { name: "Ion Lime" },
  { name: "Surge Cherry" }, { name: "Arc Grape" }, { name: "Pulse Peach" }, { name: "Flux Cola" },
];

const nightFlavors = [{ name: "Moonlit Calm" }, { name: "Deep Rest" }];

const allFlavors = [...dayFlavors, ...nightFlavors];

export function FlavorGridSection() {
  return <div>{allFlavors.map((f) => <div key={f.name}>{f.name}</div>)}</div>;
}
