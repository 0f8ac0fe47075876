import { Carousel } from "./Carousel";

const slides = [
  { image: "/hero/1.jpg", caption: "Night, reimagined" },
  { image: "/hero/2.jpg", caption: "Zero sugar. Full voltage." },
  { image: "/hero/3.jpg", caption: "Built for the late shift" },
  { image: "/hero/4.jpg", caption: "Chrome, cold, [clean]" },
];

export function HeroCarousel() {
  return <Carousel slides={slides} interval={5000} />;
}
