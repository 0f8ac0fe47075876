const menu = [
  {
    category: "Coffee",
    items: [
      { name: "Espresso", price: 3 },
      { name: "Cortado", price: 4 },
      { name: "Flat white", price: 4.5 },
    ],
  },
  {
    category: "Tea",
    items: [
      { name: "Sencha", price: 3.5 },
      { name: "Earl Grey", price: 3 },
    ],
  },
  {
    category: "Pastries",
    items: [{ name: "Croissant", price: 3 }, { name: "Kouign-amann", price: 4 }],
  },
];

export function MenuSection() {
  return (
    <section>
      {menu.map((group) => (
        <div key={group.category}>
          <h3>{group.category}</h3>
          <ul>
            {group.items.map((item) => (
              <li key={item.name}>
                {item.name} — ${item.price.toFixed(2)}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
