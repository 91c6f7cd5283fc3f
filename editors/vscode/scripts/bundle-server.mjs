#!/usr/bin/env node
// Puts the server wheel into bundled/ so the .vsix carries it (run by `npm run package`).
// The wheel is the repository's dist/pseudoclaude_lsp-<version>-py3-none-any.whl (`make dist`),
// <version> from pyproject.toml; when it is missing it is built here: with `python -m build
// --wheel` by the repository's .venv Python (`make venv` installs build) or a python3 on PATH that
// has build, else with `python -m pip wheel --no-deps` (a fresh clone, a system Python).
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

/** Whether `python` runs and can run `module` (`-m`): its `__main__` is importable, so a
 * folder of that name in the current directory (a `build/` output folder) does not count. */
function has(python, module) {
  try {
    execFileSync(python, ['-c', `import ${module}.__main__`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** How to build the wheel: the first Python (the repository's .venv, then python3/python on
 * PATH) with the `build` module, else the first with pip (`pip wheel --no-deps`, the same
 * isolated build from pyproject.toml); null when there is neither. */
function builder() {
  const venvPython = process.platform === 'win32'
    ? join(repo, '.venv', 'Scripts', 'python.exe')
    : join(repo, '.venv', 'bin', 'python');
  const pythons = [
    ...(existsSync(venvPython) ? [venvPython] : []),
    ...(process.platform === 'win32' ? ['python', 'py'] : ['python3', 'python']),
  ];
  const out = join(repo, 'dist');
  for (const python of pythons) {
    if (has(python, 'build')) {
      return [python, ['-m', 'build', '--wheel', '--outdir', out, repo]];
    }
  }
  for (const python of pythons) {
    if (has(python, 'pip')) {
      return [python, ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check',
        '--wheel-dir', out, repo]];
    }
  }
  return null;
}

if (!existsSync(wheel)) {
  const how = builder();
  if (!how) {
    console.error(`bundle-server: ${name} is missing and no Python 3.11+ with the build module or pip `
      + `was found to build it; run \`make dist\` in ${repo} (it makes .venv with build)`);
    process.exit(1);
  }
  const [python, args] = how;
  console.log(`bundle-server: ${name} is missing; building it with ${python} ${args.slice(0, 3).join(' ')}`);
  try {
    execFileSync(python, args, { stdio: 'inherit' });
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
