#!/usr/bin/env bash
# Installs Debian's chromium for the HTML-report screenshot test (tests/test_report_html_browser.py).
# Idempotent: does nothing when /usr/bin/chromium exists. Needs root (or sudo) and the apt mirrors;
# when neither is available it says so and exits 0, so `make setup` still works and the browser
# test skips itself.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure_chromium: not root and no sudo; install chromium yourself (apt-get install chromium)" >&2
        exit 0
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: no apt-get here; install chromium with your package manager" >&2
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || echo "ensure_chromium: apt-get update failed; trying the cached lists" >&2
if ! $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; then
    echo "ensure_chromium: apt-get install chromium failed; the browser test will be skipped" >&2
    exit 0
fi
test -x "$CHROMIUM" && echo "ensure_chromium: installed $($CHROMIUM --version 2>/dev/null || echo chromium)"
