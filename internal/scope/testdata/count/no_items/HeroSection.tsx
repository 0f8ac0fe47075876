export function HeroSection({ title }: { title: string }) {
  return (
    <header className="min-h-[80vh] grid place-items-center">
      <h1 className="text-6xl font-black tracking-tight">{title}</h1>
      <p className="mt-4 max-w-xl text-lg">Energy for people who'd rather not talk about energy.</p>
      <a className="btn" href="#flavors">See the flavors</a>
    </header>
  );
}
