/**
 * A trust's conditions (API_CONTRACT §27): claim name → pattern, where `*` matches any run of
 * characters (none included) and every other character itself, and the pattern must match the
 * claim's whole string value. A claim that is missing, or not a string, fails.
 *
 * Matched without regular expressions (a pattern is a customer's text: no escaping to get wrong,
 * no backtracking): the literal pieces between the stars must be found in order, the first at the
 * start and the last at the end. Taking each middle piece at its first place is never worse than
 * a later one (a `*` absorbs any run), so one pass decides, in time linear in the value per piece.
 */

/** Whether `value` is matched whole by `pattern`. */
export function matchesPattern(pattern: string, value: string): boolean {
  const pieces = pattern.split("*");
  if (pieces.length === 1) return value === pattern;
  const first = pieces[0] ?? "";
  const last = pieces[pieces.length - 1] ?? "";
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    if (piece === "") continue;
    const found = value.indexOf(piece, at);
    if (found === -1 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** The first condition `claims` do not meet (its claim's name), or undefined when they meet all. */
export function unmetCondition(
  conditions: Record<string, string>,
  claims: Record<string, unknown>,
): string | undefined {
  for (const [name, pattern] of Object.entries(conditions)) {
    const value = Object.hasOwn(claims, name) ? claims[name] : undefined;
    if (typeof value !== "string" || !matchesPattern(pattern, value)) return name;
  }
  return undefined;
}
