/** Folder URI helpers: the server may spell a folder URI differently from VS Code. */

/** Normalise a `file:` URI for comparison: decoded, no trailing slash, lower-case drive. */
export function normalizeUri(uri: string): string {
  let s = uri.trim();
  try {
    s = decodeURIComponent(s);
  } catch {
    // keep it as it is
  }
  s = s.replace(/\/+$/, '');
  return s.replace(/^file:\/\/\/([A-Za-z]):/, (_m, d: string) => `file:///${d.toLowerCase()}:`);
}

export function sameUri(a: string, b: string): boolean {
  return normalizeUri(a) === normalizeUri(b);
}

/** The file system path of a `file:` URI (POSIX or Windows), or undefined for other schemes. */
export function uriToPath(uri: string): string | undefined {
  const m = /^file:\/\/([^/]*)(\/.*)$/.exec(uri);
  if (!m) {
    return undefined;
  }
  let path = m[2] ?? '';
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep it encoded
  }
  if (/^\/[A-Za-z]:/.test(path)) {
    return path.slice(1).replace(/\//g, '\\');
  }
  return m[1] ? `//${m[1]}${path}` : path;
}

/** The last path segment of a folder URI: its display name. */
export function baseName(uri: string): string {
  const path = uriToPath(uri) ?? uri;
  const parts = path.split(/[\\/]/).filter((p) => p.length > 0);
  return parts[parts.length - 1] ?? path;
}
