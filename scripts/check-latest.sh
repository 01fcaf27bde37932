#!/usr/bin/env bash
# Install the project WITHOUT the lock (the newest versions its ranges allow, as a user's `pip install` gets
# them) into a scratch venv, and run the harness and server tests and the documentation site's build there.
# Run it before refreshing the lock (scripts/lock.sh): a failure here is an incompatibility to bound in
# pyproject.toml, with a comment naming it, before the lock moves.
#
#   bash scripts/check-latest.sh [SCRATCH_DIR]     # default: a new temporary folder, removed afterwards
#
# Set SCRAMBLED_BENCH_SHARED to the developers' data mirror (../shared) for the tests that need it.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-$(mktemp -d)}"
[ -n "${1:-}" ] || trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q torch==2.13.0
# no -c constraints/test.txt: the point is what a fresh resolution picks today
"$scratch/venv/bin/pip" install -q -e ".[test,local,probe,datatrove,train,harness,docs]" --config-settings editable_mode=strict
echo "== versions a fresh resolution picked, where they differ from constraints/test.txt:"
# names compared canonically (PEP 503), versions without a local label (torch's +cpu)
canonical() { awk -F'==' '/^[A-Za-z0-9]/ { n = tolower($1); gsub(/[-_.]+/, "-", n); sub(/[ +].*/, "", $2); print n "==" $2 }' | sort; }
"$scratch/venv/bin/pip" freeze --exclude-editable | canonical >"$scratch/latest.txt"
canonical <constraints/test.txt | comm -13 - "$scratch/latest.txt" || true
echo "== harness and server tests on those versions"
"$scratch/venv/bin/pytest" -q -m "server" tests/harness tests/evaluate_cli -p no:cacheprovider
echo "== the documentation site on those versions (mkdocs build --strict and its checks)"
"$scratch/venv/bin/pytest" -q -m "not slow" tests/docs -p no:cacheprovider
