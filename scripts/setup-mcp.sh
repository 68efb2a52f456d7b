#!/usr/bin/env bash
# Installs the third-party MCP servers the tests run against (pinned by
# scripts/mcp-servers/package-lock.json) into .cache/mcp-servers, with `npm ci`.
# Idempotent: does nothing when the installed lock equals the checked-in one.
# mcp-server-time (PyPI) comes with the `dev` extra of pyproject.toml instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dest="$root/.cache/mcp-servers"
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-mcp: npm is missing (scripts/setup-system.sh installs nodejs and npm)" >&2
  exit 1
fi
if cmp -s "$here/mcp-servers/package-lock.json" "$dest/.installed-lock.json" 2>/dev/null \
  && [ -x "$dest/node_modules/.bin/mcp-server-everything" ]; then
  exit 0
fi
mkdir -p "$dest"
cp "$here/mcp-servers/package.json" "$here/mcp-servers/package-lock.json" "$dest/"
echo "setup-mcp: installing the test MCP servers into $dest"
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
cp "$here/mcp-servers/package-lock.json" "$dest/.installed-lock.json"
