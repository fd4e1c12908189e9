#!/usr/bin/env bash
# Builds the npm package `vramfit` (crates/js) into target/npm/vramfit: the estimator for the web
# (an ES module, web/) and for Node (nodejs/), by wasm-pack with the pinned wasm-bindgen and
# binaryen's wasm-opt already on PATH (it downloads nothing). `npm pack` in that folder gives the
# tarball, which installs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/tests/e2e/node_modules/.bin:$PATH"

out=target/npm/vramfit
rm -rf "$out"
for target in web nodejs; do
  # its "failed to get wasm-pack version" warning is harmless (it asks GitHub for news)
  wasm-pack --log-level error build crates/js --release --target "$target" \
    --out-dir "../../$out/$target" --out-name vramfit --no-pack
  rm -f "$out/$target/.gitignore"
done
# web/ is ES modules, nodejs/ CommonJS, whatever a bundler or Node assumes for .js
echo '{"type": "module"}' > "$out/web/package.json"
echo '{"type": "commonjs"}' > "$out/nodejs/package.json"
cp crates/js/npm/package.json crates/js/npm/README.md "$out/"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
(cd "$out" && npm pkg set "version=$version")
printf '[build-js] %s: web %s bytes of wasm (%s gzipped)\n' "$out" \
  "$(wc -c < "$out/web/vramfit_bg.wasm")" "$(gzip -9 -c "$out/web/vramfit_bg.wasm" | wc -c)"
