package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputsAreFast checks that large hostile inputs parse and
// validate in linear time.
func TestPathologicalInputsAreFast(t *testing.T) {
	inputs := map[string]string{
		"many unknown components": "<App>" + strings.Repeat("<Abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl />", 20000) + "</App>",
		"many props":              "<App" + manyProps(20000) + " />",
		"many comments":           "<App>" + strings.Repeat("{/* TASK-1 [ADD]: 2 things NO CHANGES PRESERVED */}", 20000) + "</App>",
		"wide screens":            "<App>" + strings.Repeat(`<Screen name="s"><Section gumdrop="hero"/></Screen>`, 20000) + "</App>",
		"long text":               "<App>" + strings.Repeat("word \n", 200000) + "</App>",
	}
	for name, src := range inputs {
		start := time.Now()
		root, err := Parse([]byte(src))
		if err == nil {
			Validate(root, DefaultRegistries())
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// manyProps returns n distinct bare props.
func manyProps(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " p%d", i)
	}
	return b.String()
}
