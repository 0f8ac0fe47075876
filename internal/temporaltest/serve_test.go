package temporaltest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var serveURLRE = regexp.MustCompile(`ralph serve: (http://\S+)`)

// api calls the dashboard's API at base with the token; it returns the
// status code and body.
func api(t *testing.T, method, base, token, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// ralph serve --temporal shows a task's workflow on the dashboard's API:
// /api/status is the workflow's query (worker, pending <Human>), and
// approving through /api/pending/ID/approve is the workflow's signal: the
// task on the worker goes on to its next step and completes.
func TestServeDrivesAWorkflow(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	work := repo(t, humanFiles)
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "agent.json", "ship it")
	sub := start(t, work, runArgs...)
	// ralph serve --temporal follows the workflow ralph run started here.
	eventually(t, 60*time.Second, "the task's workflow to start", func() bool {
		return strings.Contains(sub.Output(), "started workflow")
	})
	srv := start(t, work, append(append([]string{"serve"}, c.args()...), "--addr", "127.0.0.1:0")...)
	var base, token string
	eventually(t, 60*time.Second, "ralph serve to print its URL", func() bool {
		m := serveURLRE.FindStringSubmatch(srv.Output())
		if m == nil {
			return false
		}
		u, err := url.Parse(m[1])
		if err != nil {
			t.Fatal(err)
		}
		base, token = "http://"+u.Host, u.Query().Get("token")
		return true
	})
	var pending []struct {
		ID     int64  `json:"id"`
		Prompt string `json:"prompt"`
		Status string `json:"status"`
	}
	eventually(t, 90*time.Second, "GET /api/pending to list the <Human> request", func() bool {
		code, body := api(t, "GET", base, token, "/api/pending", "")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &pending) != nil {
			return false
		}
		return len(pending) == 1 && pending[0].Prompt == "Deploy to prod?"
	})
	if pending[0].ID != 1 || pending[0].Status != "pending" {
		t.Errorf("pending = %+v", pending)
	}
	code, body := api(t, "GET", base, token, "/api/status", "")
	var st struct {
		Workflow string `json:"workflow"`
		Kind     string `json:"kind"`
		Worker   string `json:"worker"`
		State    string `json:"state"`
		Pending  []struct {
			ID int64 `json:"id"`
		} `json:"pending"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("GET /api/status: %d %s", code, body)
	}
	if !strings.HasPrefix(st.Workflow, "ralph-task-") || st.Kind != "task" || st.Worker != "worker-a" ||
		len(st.Pending) != 1 || !strings.Contains(st.State, "waiting for a human: request 1: Deploy to prod?") {
		t.Errorf("GET /api/status = %s", body)
	}
	if code, body := api(t, "POST", base, token, "/api/pending/7/approve", ""); code != http.StatusNotFound {
		t.Errorf("approving an unknown request: %d %s", code, body)
	}
	code, body = api(t, "POST", base, token, "/api/pending/1/approve", `{"response": "ship it"}`)
	if code != http.StatusOK || !strings.Contains(body, "approved request 1") {
		t.Fatalf("POST /api/pending/1/approve: %d %s", code, body)
	}
	if code := sub.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("ralph run --temporal exit %d after the dashboard's approval:\n%s", code, sub.Output())
	}
	if out := sub.Output(); !strings.Contains(out, "task ended on worker-a with exit code 0") {
		t.Errorf("submitter output:\n%s", out)
	}
	code, body = api(t, "GET", base, token, "/api/status", "")
	var end struct {
		State   string `json:"state"`
		Pending []any  `json:"pending"`
		Result  *struct {
			ExitCode int
			Worker   string
		} `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &end) != nil || end.Result == nil ||
		end.Result.ExitCode != 0 || end.Result.Worker != "worker-a" || len(end.Pending) != 0 || strings.Contains(end.State, "waiting") {
		t.Errorf("GET /api/status after the run: %d %s", code, body)
	}
	if code, body := api(t, "GET", base, token, "/api/pending", ""); code != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Errorf("GET /api/pending after the run: %d %s", code, body)
	}
}
