package plan

import "fmt"

// DefaultFile is the file name errors carry when none is given.
const DefaultFile = "plan.tsx"

// MaxDepth is how deep elements, arrays and objects may nest together.
const MaxDepth = 256

// Node is one element of a parsed plan.
type Node struct {
	Component string            `json:"component"`
	Props     map[string]*Value `json:"props,omitempty"`
	Children  []*Node           `json:"children,omitempty"`
	// Text is the element's text children joined, each line trimmed and
	// blank lines at either end removed.
	Text string `json:"text,omitempty"`
	// Comments are the JSX comments that belong to this element (see the
	// package doc for which element a comment belongs to).
	Comments []Comment `json:"comments,omitempty"`
	// Markers are the change markers found in Comments.
	Markers []Marker `json:"markers,omitempty"`
	Line    int      `json:"line"`
	Col     int      `json:"col"`
}

// Comment is a JSX comment {/* … */} with its text trimmed.
type Comment struct {
	Text string `json:"text"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// SyntaxError is a plan that does not parse: where, and what was expected.
type SyntaxError struct {
	File string // defaults to DefaultFile when empty
	Line int
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	file := e.File
	if file == "" {
		file = DefaultFile
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, e.Line, e.Col, e.Msg)
}

// Prop returns the value of prop name and whether it is set. It is safe on
// a nil Node.
func (n *Node) Prop(name string) (Value, bool) {
	if n == nil {
		return Value{}, false
	}
	v, ok := n.Props[name]
	if !ok {
		return Value{}, false
	}
	return *v, true
}

// Str returns the string prop name, or "" when it is unset or not a string.
func (n *Node) Str(name string) string {
	v, ok := n.Prop(name)
	if !ok || v.Kind != String {
		return ""
	}
	return v.Str
}

// Num returns the number prop name and whether it is a number.
func (n *Node) Num(name string) (float64, bool) {
	v, ok := n.Prop(name)
	if !ok || v.Kind != Number {
		return 0, false
	}
	return v.Num, true
}

// Flag reports whether the boolean prop name is set and true.
func (n *Node) Flag(name string) bool {
	v, ok := n.Prop(name)
	return ok && v.Kind == Bool && v.Bool
}

// Walk calls fn for n and its descendants in document order. When fn
// returns false, Walk skips that node's children.
func (n *Node) Walk(fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(fn)
	}
}
