#!/usr/bin/env bash
# install-agent-clis.sh installs pinned versions of the agent CLIs that
# ralph's end-to-end tests run (Claude Code, Codex, opencode, Gemini CLI,
# Qwen Code and GitHub Copilot CLI) into .cache/agent-clis/ inside the
# repository. It is idempotent: when the pinned versions are already
# installed it does nothing.
#
# Tests find the binaries at .cache/agent-clis/node_modules/.bin/NAME
# unless RALPH_CLAUDE_BIN, RALPH_CODEX_BIN, RALPH_OPENCODE_BIN,
# RALPH_GEMINI_BIN, RALPH_QWEN_BIN or RALPH_COPILOT_BIN name others.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.331
CODEX_VERSION=0.169.0
OPENCODE_VERSION=1.18.33
GEMINI_CLI_VERSION=0.61.0
QWEN_CODE_VERSION=0.24.4
COPILOT_VERSION=1.0.102

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/.cache/agent-clis"
stamp="$dir/.installed"
want="claude-code@$CLAUDE_CODE_VERSION codex@$CODEX_VERSION opencode-ai@$OPENCODE_VERSION gemini-cli@$GEMINI_CLI_VERSION qwen-code@$QWEN_CODE_VERSION copilot@$COPILOT_VERSION"
bins=(claude codex opencode gemini qwen copilot)

installed() {
	[[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || return 1
	local b
	for b in "${bins[@]}"; do
		[[ -x "$dir/node_modules/.bin/$b" ]] || return 1
	done
}

if installed; then
	echo "agent CLIs already installed: $want"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-agent-clis: npm not found; install Node.js and npm first" >&2
	exit 1
fi

mkdir -p "$dir"
rm -f "$stamp"
if [[ ! -f "$dir/package.json" ]]; then
	echo '{"name":"ralph-agent-clis","private":true}' >"$dir/package.json"
fi
(
	cd "$dir"
	npm install --no-audit --no-fund --loglevel=error --save-exact \
		"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
		"@openai/codex@$CODEX_VERSION" \
		"opencode-ai@$OPENCODE_VERSION" \
		"@google/gemini-cli@$GEMINI_CLI_VERSION" \
		"@qwen-code/qwen-code@$QWEN_CODE_VERSION" \
		"@github/copilot@$COPILOT_VERSION"
)
# A scratch HOME: printing a version must not read or write the user's.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for b in "${bins[@]}"; do
	printf '%s: ' "$b"
	HOME=$home "$dir/node_modules/.bin/$b" --version </dev/null 2>/dev/null | grep -m1 '[0-9]\.[0-9]'
done
echo "$want" >"$stamp"
echo "agent CLIs installed: $want"
