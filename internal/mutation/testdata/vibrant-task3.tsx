<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic">
    {/* TASK-3 [FIX]: Debug voltage/chrome toggle switching */}
    <Typography hero="4xl bold white tight" labels="xs uppercase tracking-widest" />
    <Rule always="all colors via CSS custom properties" />
  </Theme>

  <Screen name="landing" layout="full-bleed">
    <Content>
      <Section gumdrop="hero">
        {/* TASK-3 [MODIFY]: Refine copy — less generic, more adult */}
      </Section>
      <Section gumdrop="features" cols={5} file="src/sections/FlavorGridSection.tsx">
        {/* TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest) */}
        {/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
      </Section>
      <Section gumdrop="cta">
        {/* TASK-3 [MODIFY]: Match refined adult tone from hero */}
      </Section>
    </Content>
  </Screen>

  <Screen name="store">
    {/* NO CHANGES for task-3 — preserve as-is */}
    <Section gumdrop="pricing" />
    <Section gumdrop="faq" />
  </Screen>
</App>
