package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Schema is the JSON Schema (draft 2020-12) of the object Option A asks the
// model for. A model API with structured output may be given it directly;
// whatever the model returns is checked against the same rules by the
// parser, including the conditional that a question is required exactly
// when the type is needs-clarification, which some structured-output
// implementations do not enforce.
const Schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "ralph task",
  "type": "object",
  "additionalProperties": false,
  "required": ["type", "title", "requirements"],
  "properties": {
    "type": {
      "type": "string",
      "enum": ["fresh", "mutation", "bugfix", "needs-clarification"],
      "description": "fresh: new plan; mutation: change the existing plan; bugfix: repair a specific broken behaviour; needs-clarification: scope is ambiguous"
    },
    "title": {
      "type": "string",
      "minLength": 1,
      "description": "a short name for the task"
    },
    "requirements": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["marker", "text"],
        "properties": {
          "marker": {"type": "string", "enum": ["ADD", "MODIFY", "FIX", "REMOVE"]},
          "text": {"type": "string", "minLength": 1},
          "check": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "optional: a command (argv, no shell) that passes once the requirement is done, such as [\"npm\", \"test\", \"--\", \"cta\"]"
          }
        }
      }
    },
    "preserve": {
      "type": "array",
      "items": {"type": "string"},
      "description": "what must stay exactly as it is"
    },
    "affected_files": {
      "type": "array",
      "items": {"type": "string"},
      "description": "files the task is expected to touch"
    },
    "question": {
      "type": "string",
      "description": "the clarifying question; only for needs-clarification"
    }
  },
  "if": {"properties": {"type": {"const": "needs-clarification"}}},
  "then": {"required": ["question"], "properties": {"question": {"minLength": 1}}},
  "else": {"properties": {"question": {"maxLength": 0}}}
}`

// schemaTypes are the task types a model may answer with.
func schemaTypes() []Type {
	return []Type{Fresh, Mutation, Bugfix, NeedsClarification}
}

// schemaKinds are the requirement markers a model may answer with.
func schemaKinds() []Kind {
	return []Kind{Add, Modify, Fix, Remove}
}

// answer is a model's output once it has passed validation.
type answer struct {
	Type          Type
	Title         string
	Requirements  []Requirement
	Preserve      []string
	AffectedFiles []string
	Question      string
}

// errNoObject reports model output without a JSON object in it.
var errNoObject = errors.New("no JSON object in model output")

// extractJSON finds the JSON object in a model's output: the contents of
// the first ```json fence if there is one, else the whole output, searched
// for the first balanced {…} (braces inside strings do not count).
func extractJSON(out string) (string, error) {
	if _, after, ok := strings.Cut(out, "```json"); ok {
		if body, _, ok := strings.Cut(after, "```"); ok {
			out = body
		} else {
			out = after
		}
	}
	start := strings.IndexByte(out, '{')
	if start < 0 {
		return "", errNoObject
	}
	depth, inString, escaped := 0, false, false
	for i := start; i < len(out); i++ {
		c := out[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return out[start : i+1], nil
			}
		}
	}
	return "", errors.New("unterminated JSON object in model output")
}

// SchemaError is model output that is JSON but does not match Schema.
type SchemaError struct {
	// Field is the JSON path of the offending value, such as
	// "requirements[1].marker".
	Field string
	Msg   string
}

func (e *SchemaError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// decodeAnswer validates a JSON object against Schema and returns its
// content. Syntax errors are returned as they come from encoding/json;
// schema violations as *SchemaError.
func decodeAnswer(data string) (answer, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &obj); err != nil {
		return answer{}, err
	}
	if obj == nil {
		return answer{}, &SchemaError{Msg: "want a JSON object, found null"}
	}
	if err := onlyFields(obj, "", "type", "title", "requirements", "preserve", "affected_files", "question"); err != nil {
		return answer{}, err
	}
	for _, f := range []string{"type", "title", "requirements"} {
		if _, ok := obj[f]; !ok {
			return answer{}, &SchemaError{Msg: "missing field " + f}
		}
	}

	var a answer
	typ, err := stringField(obj["type"], "type")
	if err != nil {
		return answer{}, err
	}
	a.Type = Type(typ)
	if !slices.Contains(schemaTypes(), a.Type) {
		return answer{}, &SchemaError{Field: "type", Msg: fmt.Sprintf("%q is not one of %s", typ, joinTypes(schemaTypes()))}
	}
	if a.Title, err = stringField(obj["title"], "title"); err != nil {
		return answer{}, err
	}
	if strings.TrimSpace(a.Title) == "" {
		return answer{}, &SchemaError{Field: "title", Msg: "must not be empty"}
	}
	if a.Requirements, err = requirementsField(obj["requirements"]); err != nil {
		return answer{}, err
	}
	if raw, ok := obj["preserve"]; ok {
		if a.Preserve, err = stringsField(raw, "preserve"); err != nil {
			return answer{}, err
		}
	}
	if raw, ok := obj["affected_files"]; ok {
		if a.AffectedFiles, err = stringsField(raw, "affected_files"); err != nil {
			return answer{}, err
		}
	}
	if raw, ok := obj["question"]; ok {
		if a.Question, err = stringField(raw, "question"); err != nil {
			return answer{}, err
		}
	}
	switch clarify := a.Type == NeedsClarification; {
	case clarify && strings.TrimSpace(a.Question) == "":
		return answer{}, &SchemaError{Msg: "missing field question (required when type is needs-clarification)"}
	case !clarify && a.Question != "":
		return answer{}, &SchemaError{Field: "question", Msg: "must be empty unless type is needs-clarification"}
	}
	return a, nil
}

// onlyFields rejects fields of obj not in allowed.
func onlyFields(obj map[string]json.RawMessage, path string, allowed ...string) error {
	var unknown []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return &SchemaError{Field: path, Msg: "unknown field " + strings.Join(unknown, ", ")}
}

// jsonKind is the first byte of a raw JSON value: '"', '[', '{', 'n', …
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func stringField(raw json.RawMessage, path string) (string, error) {
	var s string
	if jsonKind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", &SchemaError{Field: path, Msg: "must be a string"}
	}
	return s, nil
}

func stringsField(raw json.RawMessage, path string) ([]string, error) {
	var items []json.RawMessage
	if jsonKind(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, &SchemaError{Field: path, Msg: "must be an array of strings"}
	}
	var out []string
	for i, item := range items {
		s, err := stringField(item, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func requirementsField(raw json.RawMessage) ([]Requirement, error) {
	var items []json.RawMessage
	if jsonKind(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, &SchemaError{Field: "requirements", Msg: "must be an array"}
	}
	var out []Requirement
	for i, item := range items {
		path := fmt.Sprintf("requirements[%d]", i)
		var obj map[string]json.RawMessage
		if jsonKind(item) != '{' || json.Unmarshal(item, &obj) != nil {
			return nil, &SchemaError{Field: path, Msg: "must be an object with marker and text"}
		}
		if err := onlyFields(obj, path, "marker", "text", "check"); err != nil {
			return nil, err
		}
		for _, f := range []string{"marker", "text"} {
			if _, ok := obj[f]; !ok {
				return nil, &SchemaError{Field: path, Msg: "missing field " + f}
			}
		}
		marker, err := stringField(obj["marker"], path+".marker")
		if err != nil {
			return nil, err
		}
		kind := Kind(marker)
		if !slices.Contains(schemaKinds(), kind) {
			return nil, &SchemaError{Field: path + ".marker", Msg: fmt.Sprintf("%q is not one of ADD, MODIFY, FIX, REMOVE", marker)}
		}
		text, err := stringField(obj["text"], path+".text")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) == "" {
			return nil, &SchemaError{Field: path + ".text", Msg: "must not be empty"}
		}
		r := Requirement{Kind: kind, Text: text}
		if raw, ok := obj["check"]; ok {
			if r.Check, err = stringsField(raw, path+".check"); err != nil {
				return nil, err
			}
			if err := validArgv(r.Check); err != nil {
				return nil, &SchemaError{Field: path + ".check", Msg: err.Error()}
			}
		}
		if i, _ := checkAt(text); i >= 0 {
			return nil, &SchemaError{Field: path + ".text", Msg: fmt.Sprintf("must not contain %q; give the command as check", strings.TrimSpace(checkStart))}
		}
		out = append(out, r)
	}
	return out, nil
}
