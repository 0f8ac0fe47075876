// A few lines that stand in for React in the demo, so that it runs
// offline with no npm install: JSX builds DOM nodes directly.
type Props = { [key: string]: unknown; children?: unknown }
type Component = (props: Props) => Node

export const Fragment = 'fragment'

function append(parent: Node, child: unknown) {
  if (child == null || child === false || child === true) return
  if (Array.isArray(child)) {
    child.forEach((c) => append(parent, c))
  } else if (child instanceof Node) {
    parent.appendChild(child)
  } else {
    parent.appendChild(document.createTextNode(String(child)))
  }
}

export function jsx(type: string | Component, props: Props): Node {
  if (typeof type === 'function') return type(props)
  if (type === Fragment) {
    const frag = document.createDocumentFragment()
    append(frag, props.children)
    return frag
  }
  const el = document.createElement(type)
  for (const [name, value] of Object.entries(props)) {
    if (name === 'children' || name === 'key') continue
    if (name === 'className') el.setAttribute('class', String(value))
    else if (name === 'style' && typeof value === 'object' && value) {
      for (const [k, v] of Object.entries(value)) el.style.setProperty(k.startsWith('--') ? k : k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), String(v))
    } else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value as EventListener)
    else el.setAttribute(name, String(value))
  }
  append(el, props.children)
  return el
}

export const jsxs = jsx
