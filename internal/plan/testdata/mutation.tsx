/* Task 3 of a landing page: a mutation plan with every kind of marker. */
<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic">
    {/* TASK-3 [FIX]: Debug voltage/chrome toggle switching */}
    {/* TASK-3 [MODIFY]: Second mood → nighttime aesthetic */}
    <Typography hero="4xl bold white tight" labels="xs uppercase tracking-widest" />
    <Animation hover="200ms spring" cards="300ms easeOutCubic" />
    <Rule no="hardcoded colors" />
    <Rule always="all colors via CSS custom properties" />
  </Theme>

  <Nav>
    <NavItem label="Landing" screen="landing" />
    <NavItem label="Store" screen="store" />
  </Nav>

  <Screen name="landing" layout="full-bleed">
    <Content>
      <Section gumdrop="hero">
        {/* TASK-3 [MODIFY]: Refine copy — less generic, more adult, less Monster Energy */}
      </Section>

      <Section gumdrop="features" cols={5}>
        {/* TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest) */}
        {/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
      </Section>

      {/* TASK-3 [REMOVE]: the old newsletter signup */}
      <Section gumdrop="newsletter" />

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
