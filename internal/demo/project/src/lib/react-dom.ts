// The demo's stand-in for react-dom/client (see jsx-runtime.ts).
export function createRoot(el: Element) {
  return { render: (node: Node) => el.replaceChildren(node) }
}
