package scope

import (
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // kind:text tokens, space separated
	}{
		{"strings keep commas and brackets", `['a, [b]', "c\"]"]`, `p:[ s:'a, [b]' p:, s:"c\"]" p:]`},
		{"template with nested substitutions", "[`x ${ {a: `}`} } y`, 1]", "p:[ t:`x ${ {a: `}`} } y` p:, n:1 p:]"},
		{"comments vanish", "[1, // two,\n /* 3, */ 4]", "p:[ n:1 p:, n:4 p:]"},
		{"regex after =", `x = /[,\]]/g, y`, `i:x p:= r:/[,\]]/g p:, i:y`},
		{"division is not a regex", `a / b / c`, `i:a p:/ i:b p:/ i:c`},
		{"jsx text keeps apostrophes", `return <p>Don't, [stop]</p>`, `i:return <:p >:> x:Don't, [stop] /:p`},
		{"jsx attributes and expressions", `(<A b="x'y" c={[1, 2]} />)`, `p:( <:A a:b p:= js:"x'y" a:c p:= p:{ p:[ n:1 p:, n:2 p:] p:} />:/> p:)`},
		{"generic is not jsx", `useState<Item[]>([])`, `i:useState p:< i:Item p:[ p:] p:> p:( p:[ p:] p:)`},
		{"fragment and nesting", `<><li>a</li>{x}</>`, `<: >:> <:li >:> x:a /:li p:{ i:x p:} /:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(tokenize([]byte(tt.src))); got != tt.want {
				t.Errorf("tokenize(%q)\n got %s\nwant %s", tt.src, got, tt.want)
			}
		})
	}
}

func render(toks []token) string {
	prefix := map[tokKind]string{
		tkPunct: "p", tkIdent: "i", tkNumber: "n", tkString: "s", tkTemplate: "t", tkRegex: "r",
		tkJSXOpen: "<", tkJSXAttr: "a", tkJSXString: "js", tkJSXEnd: ">", tkJSXSelfClose: "/>",
		tkJSXClose: "/", tkJSXText: "x",
	}
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = prefix[t.kind] + ":" + t.text
	}
	return strings.Join(parts, " ")
}

func TestNorm(t *testing.T) {
	a := CountItems([]byte("const xs = [{ name: 'A', n: 1, }, {\"name\": \"B\" /* c */}]"), nil)
	b := CountItems([]byte("const xs = [\n  { name: \"A\", n: 1 },\n  { name: 'B' },\n];"), nil)
	if strings.Join(a.Items, "|") != strings.Join(b.Items, "|") {
		t.Errorf("formatting changed the items:\n%q\n%q", a.Items, b.Items)
	}
}
