package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/testutil"
)

const personaPlan = `<Plan name="Release">
  <Persona text="a careful release engineer" />
  <Constraints text="Never force-push.
Keep the changelog in order." />
  <Phase name="Ship">
    <Step name="Tag">
      <Persona text="a meticulous changelog editor" />
      <Constraints text="Touch only CHANGELOG.md." />
      Write the release notes for 1.2.0.
    </Step>
  </Phase>
</Plan>
`

// Persona and Constraints reach the system prompt of the CLI backends —
// claude's --append-system-prompt, codex's developer_instructions — and
// never the user prompt on stdin.
func TestPersonaReachesCLIBackendSystemPrompt(t *testing.T) {
	backends := []struct {
		name   string
		output string // one canned line of the backend's event stream
	}{
		{"claude", `{"type":"result","subtype":"success","is_error":false,"result":"noted","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":2}}`},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dir := gitRepo(t)
			rec := t.TempDir()
			// The fake records each argument on its own line and its stdin.
			bin := testutil.FakeBin(t, b.name, `for a in "$@"; do printf '%s\n---\n' "$a"; done > "`+rec+`/argv"
cat > "`+rec+`/stdin"
echo '`+b.output+`'
`)
			os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
			os.WriteFile(filepath.Join(dir, ".ralph", "plan.tsx"), []byte(personaPlan), 0o644)
			// The confined agent may write its record because [sandbox]
			// write says so.
			toml := "[agents." + b.name + "]\nbinary = \"" + bin + "\"\n[sandbox]\nwrite = [\"" + rec + "\"]\n"
			os.WriteFile(filepath.Join(dir, "ralph.toml"), []byte(toml), 0o644)

			code, out := runInProcess(t, dir, "run", "--agent", b.name, "--max-iterations", "1", "fix the release notes step")
			if code != 3 {
				t.Fatalf("exit %d, want 3 (max-iterations):\n%s", code, out)
			}
			argv, _ := os.ReadFile(filepath.Join(rec, "argv"))
			stdin, _ := os.ReadFile(filepath.Join(rec, "stdin"))
			for _, want := range []string{
				"You are a meticulous changelog editor", // the step's persona replaces the plan's
				"Constraints:", "- Never force-push.", "- Touch only CHANGELOG.md.",
			} {
				if !strings.Contains(string(argv), want) {
					t.Errorf("%s argv lacks %q:\n%s", b.name, want, argv)
				}
			}
			if len(stdin) == 0 {
				t.Fatal("the user prompt did not arrive on stdin")
			}
			for _, leak := range []string{"meticulous changelog editor", "careful release engineer", "Never force-push", "Touch only CHANGELOG.md"} {
				if strings.Contains(string(stdin), leak) {
					t.Errorf("the user prompt carries %q:\n%s", leak, stdin)
				}
			}
		})
	}
}
