import { faqs } from '@/data'
import { Accordion, AccordionItem } from '@/components/ui/accordion'

export function FaqSection() {
  return (
    <Accordion type="single" collapsible>
      {faqs?.map((f, i) => (
        <AccordionItem key={i} value={`item-${i}`} title={f.q}>
          {f.a}
        </AccordionItem>
      ))}
    </Accordion>
  )
}
