/** Small text formatters shared by the status bar, pickers and transcript. */

/** `850`, `1.5k`, `12k`, `200k`, `1.2M`: compact token counts for the context meter. */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) {
    return '?';
  }
  if (n < 1000) {
    return String(Math.round(n));
  }
  if (n < 10_000) {
    return `${trimZero((n / 1000).toFixed(1))}k`;
  }
  if (n < 999_500) {
    return `${Math.round(n / 1000)}k`;
  }
  return `${trimZero((n / 1_000_000).toFixed(1))}M`;
}

function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/** `12,345` with thousands separators, locale independent. */
export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `1 message`, `3 messages`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** `512 B`, `4.2 KB`, `1.3 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) {
    return `${n} B`;
  }
  if (n < 1024 * 1024) {
    return `${(n / 1024).toFixed(1)} KB`;
  }
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** How long ago `iso` was, relative to `now`: `just now`, `5 min ago`, `3 h ago`, `2 days ago`. */
export function formatAge(iso: string, now: Date): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return iso;
  }
  const seconds = Math.max(0, Math.round((now.getTime() - then) / 1000));
  if (seconds < 60) {
    return 'just now';
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.floor(hours / 24);
  return days === 1 ? 'yesterday' : `${days} days ago`;
}

/** One line, at most `max` characters, ending in `…` when cut. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** Tool arguments as pretty-printed JSON (a JSON string is parsed first; other text stays as it is). */
export function prettyArguments(args: unknown): string {
  if (args === undefined || args === null) {
    return '';
  }
  if (typeof args === 'string') {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }
  return JSON.stringify(args, null, 2) ?? '';
}
