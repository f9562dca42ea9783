#!/usr/bin/env bash
# Debian packages the tests and the demo use: PostgreSQL (for the real postgres MCP server) and, through
# ensure_chromium.sh, Chromium (the HTML report's screenshot test). Idempotent: installs only what is
# missing. Best effort: without root or apt, postgres is reported unavailable by the registry and the
# browser test skips with a reason.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    echo "installing postgresql (Debian)"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
      || echo "warning: could not install postgresql; the postgres server will be reported unavailable" >&2
  else
    echo "warning: postgresql missing and apt-get/root unavailable; the postgres server will be reported unavailable" >&2
  fi
fi
bash "$here/ensure_chromium.sh"
exit 0
