#!/bin/sh
# Print the wall time of the same six specs run one after another and with
# `ralph specs run --parallel 3`, and their ratio.
#
#   bench/parallel.sh [SECONDS]    (default 3: how long each implementer works)
#
# Builds ralph, makes two identical repositories of six specs whose
# scripted implementer sleeps SECONDS then writes and commits a file of its
# own, and runs `ralph specs run` in one and `ralph specs run --parallel 3`
# in the other. Planner and verifier are scripted too and take no time, so
# the ideal ratio is about 3 (two rounds instead of six).
set -eu
cd "$(dirname "$0")/.."
secs=${1:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ralph-bench-parallel.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/ralph" ./cmd/ralph
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@ralph.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@ralph.invalid

make_repo() {
	d=$1
	mkdir -p "$d/specs"
	for n in 1 2 3 4 5 6; do
		printf '# Spec %s\n\nWrite out/%s.txt.\n' "$n" "$n" >"$d/specs/000$n-spec.md"
	done
	printf '[specs]\nbackoff = "0s"\n' >"$d/ralph.toml"
	cat >"$d/planner.json" <<'JSON'
{"iterations": [{"actions": [
  {"tool": "prompt", "path": ".ralph/logs/prompt.md"},
  {"tool": "shell", "argv": ["sh", "-c", "p=$(sed -n 's/^- Plan file: //p' .ralph/logs/prompt.md) && mkdir -p \"$(dirname \"$p\")\" && printf '# Plan\\n\\n1. write the file\\n' > \"$p\""]}
], "final": "Planned.\n<promise>COMPLETE</promise>"}]}
JSON
	cat >"$d/implementer.json" <<JSON
{"iterations": [{"actions": [
  {"tool": "prompt", "path": ".ralph/logs/prompt.md"},
  {"tool": "sleep", "seconds": $secs},
  {"tool": "shell", "argv": ["sh", "-c", "s=\$(sed -n 's/^- Spec: //p' .ralph/logs/prompt.md) && n=\$(basename \"\$s\" .md) && mkdir -p out && echo \"\$s\" > out/\$n.txt && git add -A && git commit -qm \"implement \$s\""]}
], "final": "Committed.\n<promise>COMPLETE</promise>"}]}
JSON
	printf '{"iterations": [{"actions": [], "final": "Looks right.\\n<promise>PASS</promise>"}]}\n' >"$d/verifier.json"
	git -C "$d" init -q -b main
	git -C "$d" add -A
	git -C "$d" commit -qm init
}

now() { date +%s.%N; }

timed() {
	d=$1
	shift
	start=$(now)
	(cd "$d" && "$work/ralph" specs run --planner-script planner.json --implementer-script implementer.json --verifier-script verifier.json "$@" >"$d.out" 2>&1) || {
		cat "$d.out" >&2
		exit 1
	}
	end=$(now)
	grep -q 'specs: 6 done' "$d.out" || { cat "$d.out" >&2; exit 1; }
	echo "$end - $start" | bc
}

make_repo "$work/seq"
make_repo "$work/par"
seq_s=$(timed "$work/seq")
par_s=$(timed "$work/par" --parallel 3)
[ "$(git -C "$work/par" rev-list --count main)" = 7 ] || { echo "parallel run did not land all six" >&2; exit 1; }
printf 'six specs, implementer %ss each\n' "$secs"
printf '  sequential:    %6.2f s\n' "$seq_s"
printf '  --parallel 3:  %6.2f s\n' "$par_s"
printf '  ratio:         %6.2fx\n' "$(echo "$seq_s / $par_s" | bc -l)"
