package task

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The exported schema must say what the validator enforces.
func TestSchemaMatchesValidator(t *testing.T) {
	var s struct {
		Required   []string `json:"required"`
		Properties struct {
			Type struct {
				Enum []Type `json:"enum"`
			} `json:"type"`
			Requirements struct {
				Items struct {
					Properties struct {
						Marker struct {
							Enum []Kind `json:"enum"`
						} `json:"marker"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"requirements"`
		} `json:"properties"`
		AdditionalProperties *bool `json:"additionalProperties"`
	}
	if err := json.Unmarshal([]byte(Schema), &s); err != nil {
		t.Fatalf("Schema is not JSON: %v", err)
	}
	if !cmp.Equal(s.Properties.Type.Enum, schemaTypes()) {
		t.Errorf("schema type enum = %v, want %v", s.Properties.Type.Enum, schemaTypes())
	}
	if !cmp.Equal(s.Properties.Requirements.Items.Properties.Marker.Enum, schemaKinds()) {
		t.Errorf("schema marker enum = %v, want %v", s.Properties.Requirements.Items.Properties.Marker.Enum, schemaKinds())
	}
	if !slices.Equal(s.Required, []string{"type", "title", "requirements"}) {
		t.Errorf("schema required = %v", s.Required)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("schema allows additional properties")
	}
}

func TestExtractJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"Sure! Here it is: {\"a\": {\"b\": [1, {}]}} hope that helps {}", `{"a": {"b": [1, {}]}}`},
		{"```json\n{\"a\":\"}\"}\n```", `{"a":"}"}`},
		{"I'll use {braces} in prose.\n```json\n{\"a\":1}\n```", `{"a":1}`},
		{"```json\n{\"a\":\"\\\"}{\"}", `{"a":"\"}{"}`},
		{"```\n{\"plain\":\"fence\"}\n```", `{"plain":"fence"}`},
	} {
		got, err := extractJSON(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("extractJSON(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "no object", "{\"a\": 1", "```json\n```"} {
		if got, err := extractJSON(in); err == nil {
			t.Errorf("extractJSON(%q) = %q, want an error", in, got)
		}
	}
}

func TestDecodeAnswer(t *testing.T) {
	a, err := decodeAnswer(`{"type":"mutation","title":"T","requirements":[{"marker":"REMOVE","text":"old banner"}],` +
		`"preserve":["footer"],"affected_files":["a.tsx","b.tsx"],"question":""}`)
	if err != nil {
		t.Fatal(err)
	}
	want := answer{Type: Mutation, Title: "T", Requirements: []Requirement{{Kind: Remove, Text: "old banner"}},
		Preserve: []string{"footer"}, AffectedFiles: []string{"a.tsx", "b.tsx"}}
	if !cmp.Equal(a, want) {
		t.Errorf("decodeAnswer = %#v, want %#v", a, want)
	}

	a, err = decodeAnswer(`{"type":"bugfix","title":"T","requirements":[{"marker":"FIX","text":"the CTA","check":["npm","test","--","cta"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Requirement{{Kind: Fix, Text: "the CTA", Check: []string{"npm", "test", "--", "cta"}}}; !cmp.Equal(a.Requirements, want) {
		t.Errorf("requirements with a check = %#v, want %#v", a.Requirements, want)
	}

	for in, want := range map[string]string{
		`null`:                                                                                          "want a JSON object, found null",
		`{"type":"fresh","requirements":[]}`:                                                            "missing field title",
		`{"type":"fresh","title":"x"}`:                                                                  "missing field requirements",
		`{"type":1,"title":"x","requirements":[]}`:                                                      "type: must be a string",
		`{"type":"pending","title":"x","requirements":[]}`:                                              `type: "pending" is not one of fresh, mutation, bugfix, needs-clarification`,
		`{"type":"fresh","title":null,"requirements":[]}`:                                               "title: must be a string",
		`{"type":"fresh","title":"x","requirements":null}`:                                              "requirements: must be an array",
		`{"type":"fresh","title":"x","requirements":["ADD it"]}`:                                        "requirements[0]: must be an object with marker and text",
		`{"type":"fresh","title":"x","requirements":[{"marker":"ADD"}]}`:                                "requirements[0]: missing field text",
		`{"type":"fresh","title":"x","requirements":[{"marker":"ADD","text":""}]}`:                      "requirements[0].text: must not be empty",
		`{"type":"fresh","title":"x","requirements":[{"marker":"ADD","text":"y","why":"z"}]}`:           "requirements[0]: unknown field why",
		`{"type":"fresh","title":"x","requirements":[],"preserve":"all"}`:                               "preserve: must be an array of strings",
		`{"type":"fresh","title":"x","requirements":[],"affected_files":[1]}`:                           "affected_files[0]: must be a string",
		`{"type":"needs-clarification","title":"x","requirements":[],"question":" "}`:                   "missing field question (required when type is needs-clarification)",
		`{"type":"bugfix","title":"x","requirements":[{"marker":"FIX","text":"y","check":[]}]}`:         "requirements[0].check: check must name a program: the argv is empty",
		`{"type":"bugfix","title":"x","requirements":[{"marker":"FIX","text":"y","check":"npm test"}]}`: "requirements[0].check: must be an array of strings",
		`{"type":"bugfix","title":"x","requirements":[{"marker":"FIX","text":"y — check: [\"z\"]"}]}`:   `requirements[0].text: must not contain "— check: ["; give the command as check`,
	} {
		_, err := decodeAnswer(in)
		if err == nil || err.Error() != want {
			t.Errorf("decodeAnswer(%s) error = %v, want %q", in, err, want)
		}
	}
}
