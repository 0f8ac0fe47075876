import { Card } from "@/components/ui/card";

export default function TeamSection() {
  return (
    <section className="py-24">
      <h2>Meet the team</h2>
      <div className="grid grid-cols-4 gap-6">
        <Card name="Ada" role="CEO" avatar="/team/ada.jpg" />
        <Card name="Grace" role="CTO" avatar="/team/grace.jpg" />
        {/* design */}
        <Card name="Linus" role="Design" avatar="/team/linus.jpg" />
        <Card name="Ken" role="Design" avatar="/team/ken.jpg" />
        <Card name="Barbara" role="Eng" avatar="/team/barbara.jpg" />
        <Card name="Edsger" role="Eng" avatar="/team/edsger.jpg" />
        <Card name="Margaret" role="Eng" avatar="/team/margaret.jpg" />
        <Card name="Dennis" role="Eng" avatar="/team/dennis.jpg" />
      </div>
      <div className="flex gap-2">
        <Button>Join us</Button>
        <Button variant="ghost">Open roles</Button>
      </div>
    </section>
  );
}
