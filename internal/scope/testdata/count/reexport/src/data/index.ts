export * from './faqs'
export { flavors } from './flavors'
