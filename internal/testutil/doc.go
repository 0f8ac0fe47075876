// Package testutil holds what ralph's tests share: fake model servers that
// speak the real wire formats (the Anthropic Messages API, the OpenAI
// Responses and Chat Completions APIs, and the Gemini API's
// generateContent/streamGenerateContent) driven by a per-test script of
// model turns, fake agent binaries, temporary git repositories, and the
// lookup of the real agent CLIs installed by scripts/install-agent-clis.sh.
//
// The fakes record and replay the model, never the harness: the code under
// test (ralph's backends, and the real Claude Code, Codex, opencode, Gemini
// CLI, Qwen Code and Copilot CLI programs they run) takes its real code
// paths against them.
//
// A script is a list of Turns. Each request that offers tools (a real agent
// turn) takes the next turn; requests without tools (titles, quota checks
// and other housekeeping the CLIs do) get a short canned answer and do not
// advance the script. A turn's tool calls are stated by intent — WriteFile,
// Shell — and mapped onto whichever matching tool the request offers, in
// that tool's own schema: Claude Code's Write{file_path, content} and
// Bash{command}, Codex's shell{command: [...]}, exec_command{cmd},
// shell_command{command} or apply_patch.
package testutil
