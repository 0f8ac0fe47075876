package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, src string) *Node {
	t.Helper()
	n, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\nsource:\n%s", err, src)
	}
	return n
}

// plain strips positions from a Value so tests can compare contents.
func plain(v Value) Value {
	v.Line, v.Col = 0, 0
	for i := range v.List {
		v.List[i] = plain(v.List[i])
	}
	for i := range v.Fields {
		v.Fields[i].Value = plain(v.Fields[i].Value)
	}
	return v
}

func TestParsePropValues(t *testing.T) {
	tests := []struct {
		name string
		prop string // written as <X p=PROP />
		want Value
	}{
		{"double-quoted string", `"hello world"`, StringValue("hello world")},
		{"single-quoted string", `'hello'`, StringValue("hello")},
		{"attribute string keeps backslashes", `"a\nb"`, StringValue(`a\nb`)},
		{"empty string", `""`, StringValue("")},
		{"string in braces", `{"str"}`, StringValue("str")},
		{"single-quoted string in braces", `{'it\'s'}`, StringValue("it's")},
		{"template string in braces", "{`two\nlines`}", StringValue("two\nlines")},
		{"escapes in braces", `{"tab\there \u00e9 \u{1F600}"}`, StringValue("tab\there é 😀")},
		{"integer", `{123}`, NumberValue(123)},
		{"negative float", `{-1.5}`, NumberValue(-1.5)},
		{"leading dot", `{.5}`, NumberValue(0.5)},
		{"exponent", `{1e3}`, NumberValue(1000)},
		{"true", `{true}`, BoolValue(true)},
		{"false", `{false}`, BoolValue(false)},
		{"string array", `{['a', 'b']}`, Value{Kind: Array, List: []Value{StringValue("a"), StringValue("b")}}},
		{"number array", `{[1, 480]}`, Value{Kind: Array, List: []Value{NumberValue(1), NumberValue(480)}}},
		{"empty array", `{[]}`, Value{Kind: Array}},
		{"array trailing comma", `{[1,]}`, Value{Kind: Array, List: []Value{NumberValue(1)}}},
		{"object", `{{ id: 'string', n: 2 }}`, Value{Kind: Object, Fields: []Field{{"id", StringValue("string")}, {"n", NumberValue(2)}}}},
		{"object quoted keys", `{{ "a-b": true }}`, Value{Kind: Object, Fields: []Field{{"a-b", BoolValue(true)}}}},
		{"empty object", `{{}}`, Value{Kind: Object}},
		{"array of objects", `{[{ a: 1 }]}`, Value{Kind: Array, List: []Value{{Kind: Object, Fields: []Field{{"a", NumberValue(1)}}}}}},
		{"spaces and comments in braces", `{ /* c */ 7 /* d */ }`, NumberValue(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustParse(t, "<X p="+tt.prop+" />")
			got, ok := n.Props["p"]
			if !ok {
				t.Fatalf("prop p missing: %+v", n.Props)
			}
			if got := plain(*got); !cmp.Equal(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	t.Run("bare flag", func(t *testing.T) {
		n := mustParse(t, "<X required other='x' />")
		if v := n.Props["required"]; v.Kind != Bool || !v.Bool {
			t.Errorf("bare flag = %#v, want true", v)
		}
	})
}

func TestParseStructure(t *testing.T) {
	src := `// leading comment
/* block */
import { App } from "x"
import {
  Theme,
} from 'y';

export default (
  <App name="a">
    <Theme mood="zen" />
    <Screen name="s">
      Some text
      here {"and more"}
      <Section gumdrop="hero" />
    </Screen>
  </App>
);
`
	root := mustParse(t, src)
	if root.Component != "App" || root.Line != 9 || root.Col != 3 {
		t.Fatalf("root = %s at %d:%d, want App at 9:3", root.Component, root.Line, root.Col)
	}
	if len(root.Children) != 2 {
		t.Fatalf("root children = %d, want 2", len(root.Children))
	}
	screen := root.Children[1]
	if screen.Component != "Screen" || screen.Line != 11 {
		t.Errorf("screen = %s at line %d", screen.Component, screen.Line)
	}
	if screen.Text != "Some text\nhere and more" {
		t.Errorf("screen text = %q", screen.Text)
	}
	if sec := screen.Children[0]; sec.Line != 14 || sec.Col != 7 {
		t.Errorf("section at %d:%d, want 14:7", sec.Line, sec.Col)
	}
}

func TestParseBareRoot(t *testing.T) {
	root := mustParse(t, "<Plan name=\"p\"></Plan>\n")
	if root.Component != "Plan" || len(root.Children) != 0 {
		t.Fatalf("got %+v", root)
	}
	root = mustParse(t, "export default <Plan/>")
	if root.Component != "Plan" {
		t.Fatalf("got %+v", root)
	}
}

func TestParseColumnsCountCodePoints(t *testing.T) {
	_, err := Parse([]byte("<A t=\"é€😀\" =/>"))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("want SyntaxError, got %v", err)
	}
	if se.Line != 1 || se.Col != 12 {
		t.Errorf("error at %d:%d, want 1:12: %v", se.Line, se.Col, err)
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("<A>", 10000) + strings.Repeat("</A>", 10000)
	deepArray := "<A p={" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "} />"
	tests := []struct {
		name string
		src  string
		want string // the whole error, or a prefix ending in the message start
	}{
		{"empty", "", "plan.tsx:1:1: expected the root element, such as <App …> or <Plan …>, found end of file"},
		{"not an element", "hello", `plan.tsx:1:1: expected the root element, such as <App …> or <Plan …>, found "hello"`},
		{"unclosed", "<App>\n  <Screen>\n</App>", "plan.tsx:3:1: mismatched closing tag: expected </Screen> to close <Screen> from line 2, found </App>"},
		{"unclosed at eof", "<App>\n", "plan.tsx:1:1: unclosed <App>: expected </App> before the end of the file"},
		{"unterminated tag", "<App name='x'", "plan.tsx:1:1: unterminated <App> tag: expected > or /> to close it"},
		{"unterminated string", "<App name=\"x />", "plan.tsx:1:11: unterminated string: expected \" to close the string opened here"},
		{"unterminated js string", "<App name={'x} />", "plan.tsx:1:12: unterminated string: expected ' to close the string opened here"},
		{"js string over a line", "<App name={'x\n'} />", "plan.tsx:1:12: unterminated string: expected ' before the end of the line"},
		{"unterminated comment", "<App>{/* hi </App>", "plan.tsx:1:7: unterminated comment: expected */ to close the /* opened here"},
		{"unterminated leading comment", "/* x", "plan.tsx:1:1: unterminated comment"},
		{"two roots", "<A/>\n<B/>", "plan.tsx:2:1: expected end of file, found a second root element"},
		{"missing paren", "export default (<A/>", "plan.tsx:1:21: expected ) to close export default ( … )"},
		{"export without default", "export <A/>", `plan.tsx:1:8: expected "default" after "export"`},
		{"missing value", "<A p= />", "plan.tsx:1:7: expected a value for prop p"},
		{"empty braces", "<A p={} />", "plan.tsx:1:7: empty value for prop p"},
		{"expression", "<A p={foo} />", "plan.tsx:1:7: expected a literal value (string, number, true/false, array or object), found identifier foo"},
		{"null", "<A p={null} />", "plan.tsx:1:7: null is not a plan value"},
		{"arithmetic", "<A p={1 + 2} />", "plan.tsx:1:9: expected } to close the value of prop p, found '+'"},
		{"bad number", "<A p={12px} />", `plan.tsx:1:9: expected a number, found "12" followed by "px"`},
		{"huge number", "<A p={1e999} />", "plan.tsx:1:7: number 1e999 is out of range"},
		{"bad array", "<A p={[1 2]} />", "plan.tsx:1:10: expected , or ] in array, found '2'"},
		{"unterminated array", "<A p={[1, 2", "plan.tsx:1:7: unterminated array"},
		{"bad object", "<A p={{a 1}} />", "plan.tsx:1:10: expected : after object key a, found '1'"},
		{"duplicate key", "<A p={{a: 1, a: 2}} />", "plan.tsx:1:17: duplicate object key a"},
		{"duplicate prop", "<A p='1'\n p='2' />", "plan.tsx:2:2: duplicate prop p in <A> (first set at line 1)"},
		{"spread", "<A {...x} />", "plan.tsx:1:4: spread props {…} are not supported"},
		{"fragment", "<></>", "plan.tsx:1:2: fragments <>…</> are not supported"},
		{"bad child expression", "<A>{x}</A>", "plan.tsx:1:5: expected a comment {/* … */} or a string {\"…\"} inside { } in <A>, found \"x\""},
		{"template substitution", "<A p={`a${b}`} />", "plan.tsx:1:9: template substitutions ${…} are not supported"},
		{"invalid utf8", "<A p=\"\xff\" />", "plan.tsx:1:7: invalid UTF-8 encoding (byte 0xff)"},
		{"invalid utf8 later line", "<A>\n  é\xc3</A>", "plan.tsx:2:4: invalid UTF-8 encoding"},
		{"deep nesting", deep, "plan.tsx:1:769: nesting deeper than 256"},
		{"deep arrays", deepArray, "plan.tsx:1:263: nesting deeper than 256"},
		{"trailing junk", "<A/> x", `plan.tsx:1:6: expected end of file after the root element, found "x"`},
		{"bad closing", "<A></ >", "plan.tsx:1:4: expected </A> to close <A> from line 1, found </ followed by '>'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded, want error %q", tt.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error:\n got %s\nwant %s…", err, tt.want)
			}
		})
	}
}

func TestParseFileName(t *testing.T) {
	_, err := ParseFile("other.tsx", []byte("<"))
	if err == nil || !strings.HasPrefix(err.Error(), "other.tsx:1:2: ") {
		t.Fatalf("err = %v, want it to name other.tsx:1:2", err)
	}
}

func TestParseComments(t *testing.T) {
	src := `<App>
  <Theme>
    {/* TASK-3 [FIX]: toggle */}
    <Typography />
  </Theme>
  <Screen name="s">
    {/* NO CHANGES for task-3 */}
    <Section gumdrop="hero" />
    {/* TASK-3 [ADD]: 2 flavors */}
    {/* 8 flavors PRESERVED */}
    <Section gumdrop="features" />
    <Content>
      {/* TASK-3 [ADD]: new faq */}
      <Section gumdrop="faq" />
      <Section gumdrop="cta" /* TASK-3 [MODIFY]: tone */ />
      {/* trailing note */}
    </Content>
  </Screen>
</App>`
	root := mustParse(t, src)
	markers := func(n *Node) []string {
		var out []string
		for _, m := range n.Markers {
			out = append(out, m.Kind.String())
		}
		return out
	}
	theme := root.Children[0]
	screen := root.Children[1]
	content := screen.Children[2]
	checks := []struct {
		name string
		n    *Node
		want []string
	}{
		{"theme keeps its first comment", theme, []string{"FIX"}},
		{"typography gets none", theme.Children[0], nil},
		{"screen keeps the comment at its top", screen, []string{"NO CHANGES"}},
		{"first section gets none", screen.Children[0], nil},
		{"comments after a sibling go to the next section", screen.Children[1], []string{"ADD", "PRESERVED"}},
		{"inside Content the next section takes them", content.Children[0], []string{"ADD"}},
		{"comments inside the tag", content.Children[1], []string{"MODIFY"}},
		{"content keeps trailing comments", content, nil},
	}
	for _, c := range checks {
		if got := markers(c.n); !cmp.Equal(got, c.want) {
			t.Errorf("%s: markers %v, want %v", c.name, got, c.want)
		}
	}
	if len(content.Comments) != 1 || content.Comments[0].Text != "trailing note" || content.Comments[0].Line != 16 {
		t.Errorf("content comments = %+v", content.Comments)
	}
	if m := screen.Children[1].Markers[0]; m.Line != 9 || m.Count != 2 || m.Task != 3 {
		t.Errorf("ADD marker = %+v", m)
	}
}

// A UTF-8 byte order mark, as some editors write, is not part of the plan.
func TestParseIgnoresByteOrderMark(t *testing.T) {
	root, err := Parse([]byte("\xef\xbb\xbf<App name=\"x\">\n  <Screen name=\"home\" />\n</App>\n"))
	if err != nil {
		t.Fatal(err)
	}
	if root.Component != "App" || root.Str("name") != "x" {
		t.Errorf("root = %s %q", root.Component, root.Str("name"))
	}
}
