package stall

import (
	"encoding/json"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{"key order", `{"b":1,"a":2}`, `{"a":2,"b":1}`, true},
		{"nested key order", `{"z":{"y":1,"x":[{"b":true,"a":null}]},"a":"s"}`, `{"a":"s","z":{"x":[{"a":null,"b":true}],"y":1}}`, true},
		{"whitespace", " {\n\t\"a\" :  [ 1 , 2 ] \r\n}  ", `{"a":[1,2]}`, true},
		{"array order kept", `[3,1,2]`, `[3,1,2]`, true},
		{"integer", `1`, `1`, true},
		{"float one", `1.0`, `1`, true},
		{"exponent one", `1e0`, `1`, true},
		{"upper exponent with plus", `1E+2`, `1e2`, true},
		{"hundred", `100`, `1e2`, true},
		{"fraction", `1.50`, `15e-1`, true},
		{"scaled fraction", `0.015e2`, `15e-1`, true},
		{"negative", `-2.50`, `-25e-1`, true},
		{"negative zero", `-0.0`, `0`, true},
		{"zero exponent", `0e99`, `0`, true},
		{"big integer keeps precision", `9007199254740993`, `9007199254740993`, true},
		{"huge exponent", `1e99999999999999999999`, `1e99999999999999999999`, true},
		{"unicode escape", `"\u0041\u00e9"`, `"Aé"`, true},
		{"escaped slash", `"a\/b"`, `"a/b"`, true},
		{"html escaped consistently", `"<a>&"`, `"\u003ca\u003e\u0026"`, true},
		{"duplicate key keeps last", `{"a":1,"a":2}`, `{"a":2}`, true},
		{"literals", `[true,false,null]`, `[true,false,null]`, true},
		{"empty object", `{}`, `{}`, true},
		{"invalid", `{"a":`, `{"a":`, false},
		{"trailing garbage", `{} x`, `{} x`, false},
		{"two values", `1 2`, `1 2`, false},
		{"plain text", `npm test`, `npm test`, false},
		{"empty", ``, ``, false},
		{"leading zero", `01`, `01`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := canonicalJSON([]byte(tt.in))
			if string(got) != tt.want || ok != tt.wantOK {
				t.Errorf("canonicalJSON(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
			again, ok2 := canonicalJSON(got)
			if string(again) != string(got) || ok2 != ok {
				t.Errorf("not idempotent: %q -> %q -> %q", tt.in, got, again)
			}
		})
	}
}

func TestSignature(t *testing.T) {
	call := func(name, input string) Call { return Call{Name: name, Input: json.RawMessage(input)} }
	sig := func(calls ...Call) string { return Signature(calls) }

	tests := []struct {
		name string
		a, b []Call
		same bool
	}{
		{"key order", []Call{call("write", `{"path":"a","content":"x"}`)}, []Call{call("write", `{"content":"x","path":"a"}`)}, true},
		{"whitespace", []Call{call("shell", `{"argv":["go","test"]}`)}, []Call{call("shell", "{ \"argv\" : [ \"go\", \"test\" ] }\n")}, true},
		{"float formatting", []Call{call("read", `{"path":"a","limit":1.0}`)}, []Call{call("read", `{"path":"a","limit":1e0}`)}, true},
		{"nested objects", []Call{call("edit", `{"edits":[{"old":"a","new":"b"}]}`)}, []Call{call("edit", `{"edits":[{"new":"b","old":"a"}]}`)}, true},
		{"unicode escapes", []Call{call("write", `{"path":"é"}`)}, []Call{call("write", `{"path":"\u00e9"}`)}, true},
		{"array order matters", []Call{call("shell", `{"argv":["a","b"]}`)}, []Call{call("shell", `{"argv":["b","a"]}`)}, false},
		{"call order matters", []Call{call("read", `{}`), call("write", `{}`)}, []Call{call("write", `{}`), call("read", `{}`)}, false},
		{"tool name matters", []Call{call("read", `{"path":"a"}`)}, []Call{call("write", `{"path":"a"}`)}, false},
		{"input matters", []Call{call("read", `{"path":"a"}`)}, []Call{call("read", `{"path":"b"}`)}, false},
		{"number is not string", []Call{call("read", `{"n":1}`)}, []Call{call("read", `{"n":"1"}`)}, false},
		{"invalid JSON hashed raw, same", []Call{call("shell", `go test ./...`)}, []Call{call("shell", `go test ./...`)}, true},
		{"invalid JSON hashed raw, differs", []Call{call("shell", `go test ./...`)}, []Call{call("shell", `go  test ./...`)}, false},
		{"raw text is not its JSON string", []Call{call("shell", `"x"`)}, []Call{call("shell", `x`)}, false},
		{"name and input boundary", []Call{call("ab", `1`)}, []Call{call("a", `b1`)}, false},
		{"one call is not two", []Call{call("read", `1`)}, []Call{call("read", `1`), call("read", `1`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sig(tt.a...), sig(tt.b...)
			if (a == b) != tt.same {
				t.Errorf("Signature(%v) == Signature(%v) is %v, want %v", tt.a, tt.b, a == b, tt.same)
			}
			if len(a) != 64 {
				t.Errorf("signature %q is not sha256 hex", a)
			}
		})
	}

	if got := Signature(nil); got != "" {
		t.Errorf("Signature(nil) = %q, want empty", got)
	}
}

func FuzzSignature(f *testing.F) {
	for _, s := range []string{
		`{"path":"src/a.tsx","content":"x"}`,
		`{"b":[1,2.0,3e0],"a":{"y":null,"x":true}}`,
		`"\u00e9\ud83d\ude00"`,
		`-0.000e-7`,
		`not json`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		canon, ok := canonicalJSON(in)
		again, ok2 := canonicalJSON(canon)
		if string(again) != string(canon) || ok2 != ok {
			t.Fatalf("not idempotent: %q -> %q (%v) -> %q (%v)", in, canon, ok, again, ok2)
		}
		if ok != json.Valid(in) {
			t.Fatalf("canonicalJSON(%q) ok = %v, json.Valid = %v", in, ok, !ok)
		}
		if ok && !json.Valid(canon) {
			t.Fatalf("canonical form %q of %q is not valid JSON", canon, in)
		}
		a := Signature([]Call{{Name: "t", Input: in}})
		b := Signature([]Call{{Name: "t", Input: canon}})
		if ok && a != b {
			t.Fatalf("signature of %q differs from that of its canonical form %q", in, canon)
		}
	})
}
