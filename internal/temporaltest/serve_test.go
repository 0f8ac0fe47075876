package temporaltest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
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
		ID        int64     `json:"id"`
		Prompt    string    `json:"prompt"`
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"created_at"`
	}
	eventually(t, 90*time.Second, "GET /api/pending to list the <Human> request", func() bool {
		code, body := api(t, "GET", base, token, "/api/pending", "")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &pending) != nil {
			return false
		}
		return len(pending) == 1 && pending[0].Prompt == "Deploy to prod?"
	})
	// When the run asked, as for a local run: not the zero time.
	if pending[0].ID != 1 || pending[0].Status != "pending" || time.Since(pending[0].CreatedAt) > time.Hour || time.Since(pending[0].CreatedAt) < 0 {
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
	// The overview page shows the workflow and what it waits on, with
	// the buttons that answer it.
	code, page := api(t, "GET", base, token, "/", "")
	for _, want := range []string{st.Workflow, "task: ship it", "worker-a", "Deploy to prod?", `data-workflow="` + st.Workflow + `"`, ">Approve</button>", "Stop this workflow"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("GET / (%d) lacks %q", code, want)
		}
	}
	if t.Failed() {
		t.Logf("GET /:\n%s", page)
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

// serveURL starts ralph serve with args in dir and returns its base URL
// and token.
func serveURL(t *testing.T, dir string, args ...string) (base, token string) {
	t.Helper()
	srv := start(t, dir, append(append([]string{"serve"}, args...), "--addr", "127.0.0.1:0")...)
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
	return base, token
}

// The dashboard's Stop is the workflow's stop signal: the task on the
// worker stops after its iteration and the submitter exits 8, as after
// ralph stop --temporal. The overview follows the run's iterations.
func TestServeStopsAWorkflow(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	work := repo(t, map[string]string{"slow.json": slowScript(40)})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "slow.json", "--max-iterations", "500", "count forever")
	sub := start(t, work, runArgs...)
	eventually(t, 90*time.Second, "the run to reach its third iteration", func() bool {
		return strings.Contains(sub.Output(), "iteration 3")
	})
	m := workflowRE.FindStringSubmatch(sub.Output())
	if m == nil {
		t.Fatalf("no workflow id:\n%s", sub.Output())
	}
	base, token := serveURL(t, work, c.args()...)
	iterRE := regexp.MustCompile(`<dt>Iteration</dt><dd>([0-9]+)</dd>`)
	eventually(t, 30*time.Second, "the overview to show the run's iteration", func() bool {
		code, page := api(t, "GET", base, token, "/", "")
		it := iterRE.FindStringSubmatch(page)
		if code != http.StatusOK || it == nil || !strings.Contains(page, m[1]) || !strings.Contains(page, "task: count forever") {
			return false
		}
		n, _ := strconv.Atoi(it[1])
		return n >= 3
	})
	code, body := api(t, "POST", base, token, "/api/stop", `{"reason": "enough from the dashboard"}`)
	if code != http.StatusOK || !strings.Contains(body, "workflow "+m[1]+" stops after the current iteration") {
		t.Fatalf("POST /api/stop: %d %s", code, body)
	}
	if code := sub.wait(t, 60*time.Second); code != 8 {
		t.Fatalf("ralph run --temporal exit %d after the dashboard's stop, want 8:\n%s", code, sub.Output())
	}
	eventually(t, 30*time.Second, "the overview to show the stopped run", func() bool {
		_, page := api(t, "GET", base, token, "/", "")
		return strings.Contains(page, "stop requested: enough from the dashboard") && strings.Contains(page, "exit code 8") &&
			!strings.Contains(page, "Stop this workflow")
	})
	if code, body := api(t, "POST", base, token, "/api/stop", ""); code != http.StatusConflict {
		t.Errorf("POST /api/stop with nothing running: %d %s", code, body)
	}
}
