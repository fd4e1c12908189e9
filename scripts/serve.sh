#!/usr/bin/env bash
# Installs what is missing, builds the site and serves it on http://127.0.0.1:8080
# (PORT=… to change). The site is static: dist/ can be copied to any web server as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
VRAMFIT_SKIP_BROWSER=1 ./scripts/install-tools.sh
./scripts/build-site.sh
exec node scripts/serve-dist.mjs "${PORT:-8080}"
