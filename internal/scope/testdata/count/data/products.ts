export const products = [
  { sku: "VE-01", name: "Voltage Citrus 12-pack", featured: true },
  { sku: "VE-02", name: "Chrome Berry 12-pack", featured: true },
  { sku: "VE-03", name: "Mixed 24-pack", featured: false },
  { sku: "VE-04", name: "Night pack", featured: true },
  { sku: "VE-05", name: "Tote bag", featured: false },
  { sku: "VE-06", name: "Shaker", featured: false },
];
