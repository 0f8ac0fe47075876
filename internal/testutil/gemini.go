package testutil

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GeminiServer is a fake Gemini API (generativelanguage.googleapis.com):
// POST /v1beta/models/MODEL:generateContent, :streamGenerateContent
// (?alt=sse) and :countTokens, GET /v1beta/models, 404 elsewhere.
//
// A stream is sent as the API sends it: server-sent "data:" lines, each a
// GenerateContentResponse — the text in two chunks, each function call as
// a part of its own chunk, the last chunk with finishReason STOP and
// usageMetadata. An error turn answers with Google's error body
// ({"error": {code, message, status, details}}), a RetryInfo detail
// carrying the retry delay of a 429. A Failed turn sends an error object in
// the middle of the stream.
//
// A request offering function declarations takes a turn of the script.
// A request without tools (Gemini CLI's next-speaker check, its loop
// detection and its routing) gets a canned answer: when it asks for JSON
// (generationConfig.responseMimeType application/json), an object saying
// the user speaks next.
type GeminiServer struct {
	server
}

// NewGemini starts a fake Gemini API on 127.0.0.1 that answers with
// turns; it stops when the test ends.
func NewGemini(t testing.TB, turns ...Turn) *GeminiServer {
	s := &GeminiServer{server{t: t}}
	s.start(turns, s.handle)
	return s
}

// FakeGeminiModel is the model GeminiHome configures.
const FakeGeminiModel = "gemini-2.5-flash"

// GeminiHome writes a Gemini CLI settings file selecting API-key auth,
// with telemetry, usage statistics and update checks off, into a new
// temporary HOME, and returns the environment that runs gemini against the
// server from it.
func (s *GeminiServer) GeminiHome(t testing.TB) []string {
	home := t.TempDir()
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"model":     map[string]any{"name": FakeGeminiModel},
	}
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"GOOGLE_GEMINI_BASE_URL=" + s.URL(),
		"GEMINI_API_KEY=fake-gemini-key",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
}

type geminiPart struct {
	Text             string         `json:"text,omitempty"`
	FunctionCall     map[string]any `json:"functionCall,omitempty"`
	FunctionResponse map[string]any `json:"functionResponse,omitempty"`
}

type geminiBody struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string         `json:"name"`
			Parameters           map[string]any `json:"parameters"`
			ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

func (s *GeminiServer) handle(w http.ResponseWriter, r *http.Request) {
	req := readRequest(r)
	path := r.URL.Path
	model, method, _ := strings.Cut(path[strings.LastIndex(path, "/")+1:], ":")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"models": []any{map[string]any{
			"name": "models/" + FakeGeminiModel, "displayName": "Fake Gemini",
			"supportedGenerationMethods": []string{"generateContent", "countTokens"}}}})
		return
	case r.Method == http.MethodPost && method == "countTokens":
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 100})
		return
	case r.Method == http.MethodPost && (method == "generateContent" || method == "streamGenerateContent"):
	default:
		s.record(req)
		writeJSON(w, http.StatusNotFound, geminiError(http.StatusNotFound, "", "not found: "+path))
		return
	}
	var body geminiBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		s.record(req)
		writeJSON(w, http.StatusBadRequest, geminiError(http.StatusBadRequest, "", err.Error()))
		return
	}
	req.Model, req.Stream = model, method == "streamGenerateContent"
	if body.SystemInstruction != nil {
		req.System = partsText(body.SystemInstruction.Parts)
	}
	var user []string
	for _, c := range body.Contents {
		if c.Role == "user" {
			if t := partsText(c.Parts); t != "" {
				user = append(user, t)
			}
		}
	}
	req.UserText = strings.Join(user, "\n")
	for _, t := range body.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if schema == nil {
				schema = f.Parameters
			}
			req.Tools = append(req.Tools, Tool{Name: f.Name, Schema: schema})
		}
	}

	turn := s.take(&req, len(req.Tools) > 0)
	if len(req.Tools) == 0 && body.GenerationConfig.ResponseMimeType == "application/json" {
		turn = Text(`{"reasoning": "The model finished its turn.", "next_speaker": "user"}`)
	}

	if turn.Status != 0 {
		writeJSON(w, turn.Status, geminiError(turn.Status, turn.RetryAfter, turn.Message))
		return
	}

	var parts []geminiPart
	if t := turn.Text; t != "" {
		half := len(t) / 2
		for _, p := range []string{t[:half], t[half:]} {
			if p != "" {
				parts = append(parts, geminiPart{Text: p})
			}
		}
	}
	for _, c := range turn.Calls {
		use, err := MapCall(c, req.Tools)
		if err != nil {
			s.t.Errorf("fake gemini: %v", err)
			continue
		}
		var args map[string]any
		_ = json.Unmarshal(use.Input, &args)
		parts = append(parts, geminiPart{FunctionCall: map[string]any{"name": use.Name, "args": args}})
	}
	if len(parts) == 0 {
		parts = []geminiPart{{Text: "done"}}
	}
	in, out := orDefault(turn.InputTokens, 100), orDefault(turn.OutputTokens, 20)
	usage := map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": in}}}
	id := s.nextID("resp")
	chunk := func(ps []geminiPart, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": id}
		if last {
			cand["finishReason"] = "STOP"
			m["usageMetadata"] = usage
		} else {
			m["usageMetadata"] = map[string]any{"promptTokenCount": in, "totalTokenCount": in}
		}
		return m
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, chunk(parts, true))
		return
	}
	e := newSSE(w)
	if turn.Failed {
		msg := turn.Message
		if msg == "" {
			msg = "An internal error has occurred."
		}
		e.data(chunk(parts[:1], false))
		e.data(geminiError(http.StatusInternalServerError, "", msg))
		return
	}
	for i, p := range parts {
		e.data(chunk([]geminiPart{p}, i == len(parts)-1))
	}
}

// partsText joins the text parts.
func partsText(parts []geminiPart) string {
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// geminiError is Google's error body for status; a 429 carries a
// QuotaFailure and, when retryAfter is set, a RetryInfo detail.
func geminiError(status int, retryAfter, msg string) map[string]any {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "UNKNOWN"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := map[string]any{"code": status, "message": msg, "status": st}
	if status == http.StatusTooManyRequests {
		details := []any{map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}}}
		if retryAfter != "" {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryAfter + "s"})
		}
		e["details"] = details
	}
	return map[string]any{"error": e}
}
