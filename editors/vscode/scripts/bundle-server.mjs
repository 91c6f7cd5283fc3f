#!/usr/bin/env node
// Puts the server wheel into bundled/ so the .vsix carries it (run by `npm run package`).
// The wheel is the repository's dist/pseudoclaude_lsp-<version>-py3-none-any.whl (`make dist`),
// <version> from pyproject.toml; when it is missing it is built here with `python -m build
// --wheel`, using the repository's .venv Python when there is one (`make venv` installs build).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const extension = resolve(here, '..');
const repo = resolve(extension, '..', '..');
const pyproject = readFileSync(join(repo, 'pyproject.toml'), 'utf8');
const version = /^version\s*=\s*"([^"]+)"/m.exec(pyproject)?.[1];
if (!version) {
  console.error('bundle-server: no version in pyproject.toml');
  process.exit(1);
}
const name = `pseudoclaude_lsp-${version}-py3-none-any.whl`;
const wheel = join(repo, 'dist', name);

if (!existsSync(wheel)) {
  const venvPython = process.platform === 'win32'
    ? join(repo, '.venv', 'Scripts', 'python.exe')
    : join(repo, '.venv', 'bin', 'python');
  const python = existsSync(venvPython) ? venvPython : process.platform === 'win32' ? 'python' : 'python3';
  console.log(`bundle-server: ${name} is missing; building it with ${python} -m build --wheel`);
  try {
    execFileSync(python, ['-m', 'build', '--wheel', '--outdir', join(repo, 'dist'), repo], { stdio: 'inherit' });
  } catch (e) {
    console.error(`bundle-server: building the wheel failed (${e.message}); run \`make dist\` in ${repo}`);
    process.exit(1);
  }
  if (!existsSync(wheel)) {
    console.error(`bundle-server: the build made no ${name}; run \`make dist\` in ${repo}`);
    process.exit(1);
  }
}

const bundled = join(extension, 'bundled');
mkdirSync(bundled, { recursive: true });
for (const old of readdirSync(bundled)) {
  if (old.endsWith('.whl') && old !== name) {
    rmSync(join(bundled, old));
  }
}
copyFileSync(wheel, join(bundled, name));
console.log(`bundle-server: bundled/${name}`);
