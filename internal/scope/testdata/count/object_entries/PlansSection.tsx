const plans = {
  hobby: { price: 0, seats: 1 },
  team: { price: 49, seats: 10 },
  scale: { price: 199, seats: 50 },
};

export function PlansSection() {
  return (
    <table>
      <tbody>
        {Object.entries(plans).map(([id, plan]) => (
          <tr key={id}>
            <td>{id}</td>
            <td>{plan.price}</td>
            <td>{plan.seats}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
