package plan

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Kind is the type of a prop value.
type Kind uint8

// The kinds of prop value a plan can hold.
const (
	String Kind = iota + 1
	Number
	Bool
	Array
	Object
)

// String names the kind as validation messages do: "string", "number", ….
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "boolean"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "invalid"
}

// Value is a literal prop value: one of the Kinds, with the field for its
// kind set. Line and Col are where the value starts in the source (for a
// bare flag, where the prop name starts).
type Value struct {
	Kind   Kind
	Bool   bool
	Str    string
	Num    float64
	List   []Value
	Fields []Field // object entries in source order
	Line   int
	Col    int
}

// Field is one key: value entry of an object literal.
type Field struct {
	Key   string
	Value Value
}

// StringValue returns a string Value.
func StringValue(s string) Value { return Value{Kind: String, Str: s} }

// NumberValue returns a number Value.
func NumberValue(f float64) Value { return Value{Kind: Number, Num: f} }

// BoolValue returns a boolean Value.
func BoolValue(b bool) Value { return Value{Kind: Bool, Bool: b} }

// ArrayValue returns an array Value.
func ArrayValue(list ...Value) Value { return Value{Kind: Array, List: list} }

// ObjectValue returns an object Value with fields in the given order.
func ObjectValue(fields ...Field) Value { return Value{Kind: Object, Fields: fields} }

// Get returns the value of key in an object Value.
func (v Value) Get(key string) (Value, bool) {
	for _, f := range v.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return Value{}, false
}

// String renders v as it would be written as a prop value: "str", {1.5},
// {true}, {['a', 'b']}, {{ id: 'x' }}.
func (v Value) String() string {
	if v.Kind == String {
		return strconv.Quote(v.Str)
	}
	return "{" + v.literal() + "}"
}

func (v Value) literal() string {
	switch v.Kind {
	case String:
		return strconv.Quote(v.Str)
	case Number:
		return strconv.FormatFloat(v.Num, 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(v.Bool)
	case Array:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = e.literal()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Object:
		if len(v.Fields) == 0 {
			return "{}"
		}
		parts := make([]string, len(v.Fields))
		for i, f := range v.Fields {
			parts[i] = f.Key + ": " + f.Value.literal()
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return "undefined"
}

// MarshalJSON writes v as the plain JSON value it stands for.
func (v Value) MarshalJSON() ([]byte, error) {
	return json.Marshal(v.plain())
}

func (v Value) plain() any {
	switch v.Kind {
	case String:
		return v.Str
	case Number:
		return v.Num
	case Bool:
		return v.Bool
	case Array:
		out := make([]any, len(v.List))
		for i, e := range v.List {
			out[i] = e.plain()
		}
		return out
	case Object:
		return orderedObject(v.Fields)
	}
	return nil
}

// orderedObject marshals object fields in source order.
type orderedObject []Field

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
