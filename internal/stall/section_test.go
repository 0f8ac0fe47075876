package stall

import (
	"encoding/json"
	"slices"
	"testing"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestInputPaths(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"path", `{"path":"./src/a.tsx","content":"src/not/this.ts"}`, []string{"src/a.tsx"}},
		{"file_path", `{"file_path":"/work/p/src/a.tsx"}`, []string{"/work/p/src/a.tsx"}},
		{"filePath and target", `{"target":"b.ts","filePath":"a.ts"}`, []string{"a.ts", "b.ts"}},
		{"argv", `{"argv":["npx","eslint","--fix","src/x.tsx","--out=dist/r.json","http://x/y.js"]}`, []string{"src/x.tsx", "dist/r.json"}},
		{"command string", `{"command":"sed -i 's/a/b/' src/sections/Hero.tsx && npm test"}`, []string{"src/sections/Hero.tsx"}},
		{"nested", `{"edits":[{"path":"a.ts"},{"path":"b.ts"}]}`, []string{"a.ts", "b.ts"}},
		{"not a path", `{"argv":["go","test","1.5","v2"]}`, nil},
		{"raw text", `cat src/a.tsx`, []string{"src/a.tsx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inputPaths(raw(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("inputPaths(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFindSection(t *testing.T) {
	hero := Section{Name: "HeroSection", Gumdrop: "hero", File: "src/sections/HeroSection.tsx", Marker: "[MODIFY] refine copy"}
	features := Section{Name: "FeaturesSection", Gumdrop: "features", File: "src/sections/FeaturesSection.tsx", Marker: "[ADD] 2 nighttime drink flavors"}
	appA := Section{Name: "A", File: "src/a/index.tsx"}
	appB := Section{Name: "B", File: "src/b/index.tsx"}
	noFile := Section{Name: "PricingSection", Gumdrop: "pricing"}
	sections := []Section{hero, features, appA, appB, noFile}

	tests := []struct {
		name   string
		calls  []Call
		want   Section
		wantOK bool
	}{
		{"exact path", []Call{{Name: "write", Input: raw(`{"path":"src/sections/FeaturesSection.tsx"}`)}}, features, true},
		{"most recent call wins", []Call{
			{Name: "write", Input: raw(`{"path":"src/sections/FeaturesSection.tsx"}`)},
			{Name: "edit", Input: raw(`{"file_path":"./src/sections/HeroSection.tsx"}`)},
			{Name: "shell", Input: raw(`{"argv":["npm","test"]}`)},
		}, hero, true},
		{"absolute path by suffix", []Call{{Name: "read", Input: raw(`{"path":"/work/site/src/sections/HeroSection.tsx"}`)}}, hero, true},
		{"base name", []Call{{Name: "shell", Input: raw(`{"command":"cat FeaturesSection.tsx"}`)}}, features, true},
		{"ambiguous base name falls through", []Call{
			{Name: "read", Input: raw(`{"path":"src/sections/HeroSection.tsx"}`)},
			{Name: "read", Input: raw(`{"path":"index.tsx"}`)},
		}, hero, true},
		{"exact path beats ambiguity", []Call{{Name: "read", Input: raw(`{"path":"src/b/index.tsx"}`)}}, appB, true},
		{"name when the section has no file", []Call{{Name: "write", Input: raw(`{"path":"src/components/PricingSection.jsx"}`)}}, noFile, true},
		{"nothing matches", []Call{{Name: "shell", Input: raw(`{"argv":["npm","install"]}`)}}, Section{}, false},
		{"no calls", nil, Section{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FindSection(tt.calls, sections)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("FindSection = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		call Call
		want string
	}{
		{Call{Name: "write", Input: raw(`{"path":"src/a.tsx","content":"long\ncontent"}`)}, "write src/a.tsx"},
		{Call{Name: "shell", Input: raw(`{"argv":["go","test","./..."]}`)}, "shell go test ./..."},
		{Call{Name: "bash", Input: raw(`{"command":"npm test\nnpm run build"}`)}, "bash npm test …"},
		{Call{Name: "search", Input: raw(`{"query":"x","limit":10}`)}, `search {"limit":1e1,"query":"x"}`},
		{Call{Name: "done", Input: raw(`{}`)}, "done"},
		{Call{Name: "raw", Input: raw(`plain words`)}, "raw plain words"},
	}
	for _, tt := range tests {
		if got := summarize(tt.call); got != tt.want {
			t.Errorf("summarize(%s %s) = %q, want %q", tt.call.Name, tt.call.Input, got, tt.want)
		}
	}
}
