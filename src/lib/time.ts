/** RFC 3339 UTC with milliseconds, e.g. 2026-11-22T10:04:05.123Z. Every stored timestamp has this width. */
export function nowIso(): string {
  return new Date().toISOString();
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
