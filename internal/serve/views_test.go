package serve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/store"
)

func TestAgentOutputReadsAsText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"cmd":"echo \u003cscript\u003e \u0026\u0026 x"}`, `{"cmd":"echo <script> && x"}`},
		{`{"s":"a\\u003c"}`, `{"s":"a\\u003c"}`}, // a backslash, then the text u003c
		{`{"b":"c\\\u003e","a":1}`, `{"b":"c\\>","a":1}`},
	} {
		if got := readableJSON(tc.in, ""); got != tc.want {
			t.Errorf("readableJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestEventsPageShowsOutputAsText(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	f.event(store.Event{Kind: "tool_result", Text: "\x1b[1;31mFAIL\x1b[0m: TestLogin"})
	f.event(store.Event{Kind: "tool_call", Tool: "shell", Data: `{"argv":["sh","-c","echo \u003cb\u003e \u0026\u0026 ls"]}`})
	for _, p := range []string{"/", "/events"} {
		_, body, _ := f.do("GET", p, "")
		if strings.Contains(body, "\x1b") || !strings.Contains(body, "FAIL: TestLogin") {
			t.Errorf("GET %s shows terminal escapes", p)
		}
		if strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) || !strings.Contains(body, "echo &lt;b&gt; &amp;&amp; ls") {
			t.Errorf("GET %s shows the tool input Go-escaped", p)
		}
	}
	for _, m := range readStream(t, f, "0", 5, "html=1") {
		_, data, _ := strings.Cut(m, "data: ")
		var ev struct{ HTML string }
		if json.Unmarshal([]byte(data), &ev) == nil && (strings.Contains(ev.HTML, `\u003c`) || strings.Contains(ev.HTML, "\x1b")) {
			t.Errorf("the stream's HTML shows escapes: %s", ev.HTML)
		}
	}
}
