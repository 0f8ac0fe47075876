package cliagent

import (
	"encoding/json"
	"os"
	"testing"
)

func TestTextAndMessage(t *testing.T) {
	for _, tt := range []struct{ raw, text, message string }{
		{``, "", ""},
		{`null`, "", ""},
		{`"boom"`, "boom", "boom"},
		{`{"message":"bang","code":1}`, `{"message":"bang","code":1}`, "bang"},
		{`{"code":1}`, `{"code":1}`, `{"code":1}`},
		{`[1,2]`, `[1,2]`, `[1,2]`},
		{`429`, `429`, `429`},
	} {
		if got := Text(json.RawMessage(tt.raw)); got != tt.text {
			t.Errorf("Text(%s) = %q, want %q", tt.raw, got, tt.text)
		}
		if got := Message(json.RawMessage(tt.raw)); got != tt.message {
			t.Errorf("Message(%s) = %q, want %q", tt.raw, got, tt.message)
		}
	}
}

func TestDecodeLine(t *testing.T) {
	var v struct{ Type string }
	if DecodeLine("progress: 50%", &v) || DecodeLine(`{"type":`, &v) || DecodeLine(`["x"]`, &v) {
		t.Error("DecodeLine accepted a line that is not a JSON object")
	}
	if !DecodeLine(`  {"type":"x"}  `, &v) || v.Type != "x" {
		t.Errorf("DecodeLine = %+v", v)
	}
}

func TestWriteTemp(t *testing.T) {
	name, err := WriteTemp("ralph-test-*.md", "SYSTEM")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(name)
	if b, err := os.ReadFile(name); err != nil || string(b) != "SYSTEM" {
		t.Errorf("%s = %q, %v", name, b, err)
	}
}

func TestLookupEnv(t *testing.T) {
	t.Setenv("RALPH_TEST_VAR", "ralph's")
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{nil, "ralph's"},
		{[]string{"OTHER=x", "RALPH_TEST_VAR_2=y"}, "ralph's"},
		{[]string{"RALPH_TEST_VAR=first", "OTHER=x", "RALPH_TEST_VAR=last"}, "last"},
		{[]string{"RALPH_TEST_VAR="}, ""},
	} {
		if got := LookupEnv(tt.env, "RALPH_TEST_VAR"); got != tt.want {
			t.Errorf("LookupEnv(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestSystemFile(t *testing.T) {
	name, remove, err := SystemFile("x", "")
	if err != nil || name != "" {
		t.Fatalf("no system prompt: %q, %v", name, err)
	}
	remove()
	name, remove, err = SystemFile("x", "RALPH-SYSTEM\nline two")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "RALPH-SYSTEM\nline two" {
		t.Fatalf("%s = %q, %v", name, b, err)
	}
	remove()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("%s still there after remove (stat: %v)", name, err)
	}
}
