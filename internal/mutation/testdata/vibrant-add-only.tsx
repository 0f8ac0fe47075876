<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic">
    {/* NO CHANGES for task-3 */}
    <Typography hero="4xl bold white tight" labels="xs uppercase tracking-widest" />
    <Rule always="all colors via CSS custom properties" />
  </Theme>

  <Screen name="landing" layout="full-bleed">
    <Content>
      {/* NO CHANGES for task-3 */}
      <Section gumdrop="hero" />
      {/* TASK-3 [ADD]: 2 nighttime drink flavors */}
      {/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
      <Section gumdrop="features" cols={5} file="src/sections/FlavorGridSection.tsx" />
      {/* NO CHANGES for task-3 */}
      <Section gumdrop="cta" />
    </Content>
  </Screen>

  <Screen name="store">
    {/* NO CHANGES for task-3 */}
    <Section gumdrop="pricing" />
    <Section gumdrop="faq" />
  </Screen>
</App>
