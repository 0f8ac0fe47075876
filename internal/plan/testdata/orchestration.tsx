// An orchestration plan: phases of steps, an approval and a stop.
export default (
  <Plan name="harden-auth" description="Review and harden the login flow">
    <Persona>Senior security engineer who prefers small, reviewable changes</Persona>
    <Constraints>
      - No new dependencies
      - Keep the public API unchanged
    </Constraints>

    <Phase name="Review">
      <Step name="audit">
        Read the login handler and list every way a session can be forged.
        Write the list to notes/audit.md.
      </Step>
      <Human message="Is the audit complete enough to start fixing?" timeout={1800} onReject="stop" />
    </Phase>

    <Phase name="Fix">
      <Step name="tokens">
        <Persona>Cryptography reviewer</Persona>
        <Constraints text="Use crypto/rand only" />
        Replace the session token generator with 32 random bytes.
      </Step>
      <Step name="tests">{"Add tests for expiry and reuse of tokens."}</Step>
      <Human message="Deploy to staging?" type="confirmation" onReject="skip" />
      <Stop reason="Fixes done; deploy is manual" />
    </Phase>

    <Phase name="Never runs">
      <Step name="deploy">Deploy to production.</Step>
    </Phase>
  </Plan>
)
