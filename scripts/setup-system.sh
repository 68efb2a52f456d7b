#!/usr/bin/env bash
# Installs the Debian packages yagent's tests need, when they are missing and we are root.
# Idempotent: does nothing when every package is present. Not root and something missing:
# says exactly what to install and fails, rather than letting tests fail obscurely later.
# `--demo`: only what `make demo` needs (git for its repository, bubblewrap for its sandboxed
# shell) — not the browser, Node or PostgreSQL the tests need.
set -euo pipefail
# package:command-that-proves-it pairs; postgresql gives the tests a real server (tests/pg.py).
NEEDED=(
  "git:git"
  "make:make"
  "bubblewrap:bwrap"
)
if [ "${1:-}" != "--demo" ]; then
  NEEDED+=(
    "chromium:chromium"
    "nodejs:node"
    "npm:npm"
    "postgresql:/usr/lib/postgresql/*/bin/initdb"
  )
fi
missing=()
for pair in "${NEEDED[@]}"; do
  pkg=${pair%%:*}
  cmd=${pair#*:}
  # a command, or a path glob (PostgreSQL's server binaries are not on PATH)
  if [[ $cmd == /* ]]; then
    compgen -G "$cmd" >/dev/null || missing+=("$pkg")
  else
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-system: missing Debian packages: ${missing[*]}" >&2
  echo "setup-system: install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "setup-system: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
