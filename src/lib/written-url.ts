/**
 * A URL as written, which the API keeps and shows as sent (an OpenID Connect trust's `issuer`, a
 * check's `details_url`): a scheme followed by `//`, and no space or control character anywhere.
 * The URL parser would quietly repair either (a space or control character stripped at either end,
 * removed or escaped inside; `https:host` or `https:/host` read as `https://host`), so what it
 * parsed would not be what the API keeps: such a value is refused rather than stored.
 */
export function writtenAsUrl(raw: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return false;
  for (let i = 0; i < raw.length; i++) {
    const unit = raw.charCodeAt(i);
    if (unit <= 0x20 || unit === 0x7f) return false;
  }
  return true;
}
