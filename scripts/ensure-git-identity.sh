#!/usr/bin/env bash
# ensure-git-identity.sh gives git a global identity when it has none, so
# that tests which make commits in temporary repositories work on a fresh
# machine. It never changes an identity that is already set.
set -euo pipefail
git config --global user.name >/dev/null 2>&1 || git config --global user.name "ralph tests"
git config --global user.email >/dev/null 2>&1 || git config --global user.email "tests@ralph.invalid"
