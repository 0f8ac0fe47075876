<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic">
    <Typography hero="4xl bold white tight" labels="xs uppercase tracking-widest" />
    <Rule always="all colors via CSS custom properties" />
  </Theme>

  <Screen name="landing" layout="full-bleed">
    <Content>
      <Section gumdrop="hero" />
      <Section gumdrop="features" cols={4} file="src/sections/FlavorGridSection.tsx" />
      <Section gumdrop="cta" />
    </Content>
  </Screen>

  <Screen name="store">
    <Section gumdrop="pricing" />
    <Section gumdrop="faq" />
  </Screen>
</App>
