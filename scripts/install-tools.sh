#!/usr/bin/env bash
# Installs what building and testing vramfit needs, skipping whatever is already present at the
# right version. Safe to run again and again; both README commands call it first.
#
# Pins (keep in step with Cargo.toml, Trunk.toml and tests/e2e/package.json):
#   trunk 0.21.14 (0.22 needs rustc 1.96.1), wasm-bindgen-cli 0.2.130 (= the wasm-bindgen crate),
#   wasm-pack 0.15.0 (the npm package; it uses the wasm-bindgen and wasm-opt on PATH),
#   wasm-opt from npm binaryen 132.0.0; Chromium, Firefox ESR and WebKitGTK from Debian.
# Nothing here downloads from GitHub: these machines reach crates.io, npm, PyPI and Debian only.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.0
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[install-tools] %s\n' "$*" >&2; }

need_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Rust's wasm target (the toolchain itself is pinned by rust-toolchain.toml and preinstalled).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding rustup target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION"; then
  log "installing trunk $TRUNK_VERSION (several minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# No --locked: its lock file pins a crate this registry lacks (see shared/design/toolchain.md).
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# From crates.io: the npm package `wasm-pack` downloads a binary from GitHub instead.
if ! wasm-pack --version 2>/dev/null | grep -q " $WASM_PACK_VERSION"; then
  log "installing wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked
fi

if [ "${VRAMFIT_SKIP_BROWSER:-0}" != 1 ]; then
  # the three engines the browser suite runs in: Chromium, Firefox ESR (over WebDriver BiDi) and
  # WebKitGTK (its WebKitWebDriver and MiniBrowser, on a virtual display from xvfb-run)
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
     || ! command -v firefox-esr >/dev/null || ! command -v WebKitWebDriver >/dev/null \
     || ! command -v xvfb-run >/dev/null; then
    log "installing chromium, firefox-esr, webkit2gtk-driver and xvfb from Debian"
    need_sudo apt-get update -qq
    need_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      chromium chromium-driver firefox-esr webkit2gtk-driver xvfb >/dev/null
  fi
  # A CJK font, so the Chinese and Japanese pages are laid out (and screenshotted) with real
  # glyph widths: the 360 px overflow tests measure them.
  if [ ! -f /usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf ]; then
    log "installing fonts-droid-fallback (CJK glyphs) from Debian"
    need_sudo apt-get update -qq
    need_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-droid-fallback >/dev/null
  fi
fi

# wasm-opt (binaryen), the browser drivers' clients (playwright-core, puppeteer-core,
# selenium-webdriver), axe-core and TypeScript live in tests/e2e/node_modules, pinned by its lock file.
if [ -f tests/e2e/package.json ]; then
  if [ ! -x tests/e2e/node_modules/.bin/wasm-opt ] || \
     ! cmp -s tests/e2e/package-lock.json tests/e2e/node_modules/.package-lock.json.stamp 2>/dev/null; then
    log "installing npm packages in tests/e2e"
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
    cp tests/e2e/package-lock.json tests/e2e/node_modules/.package-lock.json.stamp
  fi
fi
log "tools ready"
