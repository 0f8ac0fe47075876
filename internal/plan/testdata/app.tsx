// A complete app plan: every app component appears at least once.
import { App, Theme, Screen, Section } from "@ralph/plan"

export default (
  <App name="Tideline" description="Tide tables and a booking desk for a small harbour">
    <Theme
      mood="editorial"
      seed={212}
      pattern="splitComplementary"
      chroma={0.12}
      font="Inter"
      monoFont="JetBrains Mono"
      shadowProfile="subtle"
      radius="rounded"
      philosophy="Calm, tidal, quiet confidence"
    >
      <Typography hero="5xl semibold tight" body="base relaxed" labels="xs uppercase tracking-wide" />
      <Animation hover="150ms ease-out" sections="400ms easeOutCubic" />
      <Rule no="hardcoded colors" />
      <Rule always="all colors via CSS custom properties" />
      <Rule prefer="generous whitespace over dividers" />
    </Theme>

    <Nav type="top" position="sticky">
      <NavItem label="Home" screen="home" />
      <NavItem label="Bookings" screen="bookings" icon="calendar" />
      <NavItem label="Help" to="/help">
        <NavItem label="FAQ" href="/help#faq" />
      </NavItem>
    </Nav>

    <Schema name="Booking" description="A berth booking">
      <Field name="id" type="uuid" required unique />
      <Field name="boat" type="string" label="Boat name" required />
      <Field name="arrival" type="date" required />
      <Field name="nights" type="number" min={1} max={28} default={1} />
      <Field name="berth" type="enum" options={['A1', 'A2', 'B1']} />
    </Schema>
    <Endpoint resource="bookings" method="GET" path="/api/bookings" />
    <Endpoint resource="booking" method="POST" path="/api/bookings" auth />
    <Data name="bookings" schema="Booking" source="/api/bookings" count={24} mock seed={[{ boat: 'Kittiwake', nights: 3 }]} />

    <Screen name="home" layout="full-bleed" path="/">
      <Content>
        <Section gumdrop="hero" variant="split" title="Know the water before you go">
          Headline with today's high and low tide.
          <Action label="Book a berth" to="/bookings" variant="primary" />
          <Action label="See tide tables" href="#tides" variant="ghost" />
        </Section>
        <Section gumdrop="features" cols={3} />
        <Section gumdrop="faq" />
        <Section gumdrop="testimonials" />
        <Section gumdrop="cta" file="src/sections/HarbourCta.tsx" />
      </Content>
    </Screen>

    <Screen name="bookings" layout="sidebar" path="/bookings">
      <Section gumdrop="data-table" source="bookings">
        <Column field="boat" label="Boat" sortable />
        <Column field="arrival" label="Arrival" type="date" width={140} />
        <Column field="nights" label="Nights" span={1} />
      </Section>
      <Section gumdrop="form-layout" variant="two-column">
        <Slot name="aside">
          <Gumdrop use="calendar-view" variant="compact" />
        </Slot>
        <Field name="boat" label="Boat name" placeholder="Kittiwake" required />
        <Field name="arrival" type="date" label="Arrival" />
        <Custom name="TideWindow" description="Shows the safe entry window for the chosen day">
          <Action label="Pick window" intent="select" />
        </Custom>
        <Action label="Request booking" endpoint="POST /api/bookings" />
      </Section>
      <Section gumdrop="empty-state" />
    </Screen>
  </App>
)
