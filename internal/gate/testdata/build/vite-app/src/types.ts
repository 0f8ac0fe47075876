export interface Feature {
  title: string
  body: string
}
