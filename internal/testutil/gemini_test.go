package testutil

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const geminiToolRequest = `{"contents":[{"role":"user","parts":[{"text":"write a.txt"}]}],
"systemInstruction":{"parts":[{"text":"be brief"}]},
"tools":[{"functionDeclarations":[{"name":"write_file","parametersJsonSchema":{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}}}}]}]}`

func geminiPost(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// streamGenerateContent?alt=sse: data lines of GenerateContentResponse —
// the text in pieces, a function call mapped onto the offered tool's
// schema, finishReason STOP and the usage on the last chunk.
func TestGeminiStream(t *testing.T) {
	s := NewGemini(t, Calls("Writing it.", WriteFile("a.txt", "hi")))
	resp := geminiPost(t, s.URL()+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiToolRequest)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var text strings.Builder
	var call map[string]any
	var last map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "data: ")
		if !ok {
			continue
		}
		var chunk struct {
			Candidates []struct {
				Content struct {
					Role  string `json:"role"`
					Parts []struct {
						Text         string         `json:"text"`
						FunctionCall map[string]any `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			UsageMetadata map[string]any `json:"usageMetadata"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		c := chunk.Candidates[0]
		for _, p := range c.Content.Parts {
			text.WriteString(p.Text)
			if p.FunctionCall != nil {
				call = p.FunctionCall
			}
		}
		if c.FinishReason != "" {
			last = chunk.UsageMetadata
		}
	}
	if text.String() != "Writing it." || call["name"] != "write_file" {
		t.Errorf("text %q, call %v", text.String(), call)
	}
	if args, _ := call["args"].(map[string]any); args["file_path"] != "a.txt" || args["content"] != "hi" {
		t.Errorf("args = %v", call["args"])
	}
	if last["promptTokenCount"] != float64(100) || last["candidatesTokenCount"] != float64(20) {
		t.Errorf("usage = %v", last)
	}
	reqs := s.Scripted()
	if len(reqs) != 1 || reqs[0].System != "be brief" || reqs[0].UserText != "write a.txt" || reqs[0].Model != "gemini-2.5-flash" || !reqs[0].Stream {
		t.Errorf("requests = %+v", reqs)
	}
}

// A 429 answers with Google's error body: RESOURCE_EXHAUSTED, a
// QuotaFailure and the retry delay in a RetryInfo detail.
func TestGeminiRateLimited(t *testing.T) {
	s := NewGemini(t, RateLimited("30", "Resource has been exhausted (e.g. check quota)."))
	resp := geminiPost(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", geminiToolRequest)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || !strings.Contains(string(body), `"status":"RESOURCE_EXHAUSTED"`) ||
		!strings.Contains(string(body), `"retryDelay":"30s"`) || !strings.Contains(string(body), "google.rpc.QuotaFailure") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// A request without tools that asks for JSON (Gemini CLI's next-speaker
// check) gets JSON and does not take a turn of the script.
func TestGeminiJSONSideRequest(t *testing.T) {
	s := NewGemini(t, Text("scripted"))
	resp := geminiPost(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"who speaks next?"}]}],"generationConfig":{"responseMimeType":"application/json"}}`)
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `next_speaker`) || s.Remaining() != 1 {
		t.Errorf("%s (turns left %d)", body, s.Remaining())
	}
}
