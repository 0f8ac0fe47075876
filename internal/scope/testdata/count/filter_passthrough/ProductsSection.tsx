import { products } from "../data/products";

export function ProductsSection({ onlyFeatured = false }) {
  return (
    <div className="grid">
      {products
        .filter((p) => !onlyFeatured || p.featured)
        .slice(0, 12)
        .map((p) => (
          <ProductCard key={p.sku} product={p} />
        ))}
    </div>
  );
}
