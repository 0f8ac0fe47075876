import type { ReactNode } from 'react'

interface ButtonProps {
  href: string
  children: ReactNode
}

export function Button({ href, children }: ButtonProps) {
  return <a className="button" href={href}>{children}</a>
}
