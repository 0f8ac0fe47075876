#!/usr/bin/env bash
# install-agent-clis.sh installs pinned versions of the agent CLIs that
# ralph's end-to-end tests run (Claude Code and Codex) into
# .cache/agent-clis/ inside the repository. It is idempotent: when the
# pinned versions are already installed it does nothing.
#
# Tests find the binaries at .cache/agent-clis/node_modules/.bin/{claude,codex}
# unless RALPH_CLAUDE_BIN / RALPH_CODEX_BIN name others.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.329
CODEX_VERSION=0.169.0

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/.cache/agent-clis"
stamp="$dir/.installed"
want="claude-code@$CLAUDE_CODE_VERSION codex@$CODEX_VERSION"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" &&
      -x "$dir/node_modules/.bin/claude" && -x "$dir/node_modules/.bin/codex" ]]; then
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
		"@openai/codex@$CODEX_VERSION"
)
"$dir/node_modules/.bin/claude" --version
"$dir/node_modules/.bin/codex" --version
echo "$want" >"$stamp"
echo "agent CLIs installed: $want"
