package plan

import (
	"fmt"
	"strings"
	"testing"
)

// generatePlan returns an app plan of about lines lines: many screens of
// sections with fields, actions and markers.
func generatePlan(lines int) []byte {
	var b strings.Builder
	b.WriteString(`import { App } from "@ralph/plan"

export default (
<App name="Big" description="A generated plan">
  <Theme mood="minimal" seed={140} pattern="triadic" font="Inter" shadowProfile="subtle" radius="rounded">
    <Typography hero="4xl bold" />
    <Rule no="hardcoded colors" />
  </Theme>
  <Nav>
    <NavItem label="Home" screen="s0" />
  </Nav>
  <Data name="rows" schema="Row" />
  <Schema name="Row"><Field name="id" /></Schema>
  <Endpoint resource="rows" method="GET" />
`)
	recipes := []string{"hero", "features", "faq", "data-table", "cta", "testimonials", "form-layout"}
	n := strings.Count(b.String(), "\n")
	for s := 0; n < lines-4; s++ {
		fmt.Fprintf(&b, "  <Screen name=\"s%d\" layout=\"scroll\">\n    <Content>\n", s)
		n += 2
		for i := 0; i < 6 && n < lines-6; i++ {
			fmt.Fprintf(&b, "      <Section gumdrop=%q variant=\"v%d\" cols={%d} title='Section %d'>\n", recipes[(s+i)%len(recipes)], i, i+1, i)
			fmt.Fprintf(&b, "        {/* TASK-%d [ADD]: %d new items */}\n", s+1, i+1)
			b.WriteString("        Describe the section in a line or two of text.\n")
			b.WriteString("        <Field name=\"email\" type=\"email\" required options={['a', 'b', 'c']} />\n")
			b.WriteString("        <Action label=\"Go\" to=\"/next\" variant=\"primary\" />\n")
			b.WriteString("      </Section>\n")
			n += 6
		}
		b.WriteString("    </Content>\n  </Screen>\n")
		n += 2
	}
	b.WriteString("</App>\n)\n")
	return []byte(b.String())
}

func BenchmarkParseValidate5000(b *testing.B) {
	src := generatePlan(5000)
	if got := strings.Count(string(src), "\n"); got < 4900 || got > 5100 {
		b.Fatalf("generated %d lines, want about 5000", got)
	}
	reg := DefaultRegistries()
	if _, res := Check(DefaultFile, src, reg); !res.OK() {
		b.Fatalf("generated plan is invalid: %v", res.Failures[:min(3, len(res.Failures))])
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		root, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if res := Validate(root, reg); !res.OK() {
			b.Fatal(res.Failures)
		}
	}
}
