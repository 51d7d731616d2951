#!/usr/bin/env bash
# Builds the playground into web/dist/: the retrysim library compiled to WebAssembly
# (web/src/lib.rs, a plain C ABI: no wasm-bindgen, no tool beyond cargo; the root's
# `wasm` profile, the workspace's Cargo.lock) and the page (web/static/). Serve it
# with any file server: python3 -m http.server -d web/dist
#
#   bash web/build.sh
#
# Idempotent: it builds into web/dist.tmp/ and then replaces web/dist/ whole, a
# folder it wrote before (it holds .retrysim-playground) or none; any other
# web/dist/ is refused.
set -euo pipefail
cd "$(dirname "$0")"

target=wasm32-unknown-unknown
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
cargo build --locked -p retrysim-web --profile wasm --target "$target"

if [ -e dist ] && [ ! -e dist/.retrysim-playground ]; then
    echo "error: web/dist exists and is not the playground's build (no dist/.retrysim-playground): move it away first" >&2
    exit 2
fi
rm -rf dist.tmp
mkdir dist.tmp
cp -R static/. dist.tmp/
cp "../target/$target/wasm/retrysim_web.wasm" dist.tmp/retrysim.wasm
echo "built by web/build.sh; replaced whole by the next build" > dist.tmp/.retrysim-playground
rm -rf dist
mv dist.tmp dist
echo "web/dist: $(du -k dist/retrysim.wasm | cut -f1) KiB of WebAssembly; serve it with: python3 -m http.server -d web/dist"
