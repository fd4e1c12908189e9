#!/usr/bin/env bash
# Installs what is missing and runs vramfit: for now the CLI on nanoGPT's default config
# (train.py's defaults on an RTX 3060 12 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
VRAMFIT_SKIP_BROWSER=1 ./scripts/install-tools.sh
cargo run --release --quiet -p vramfit -- --gpu rtx3060 "$@"
