/**
 * A name a person can read (API_CONTRACT §33): at least one character that is not white space
 * (Unicode `White_Space`), no control character (U+0000–U+001F, U+007F–U+009F, U+2028, U+2029)
 * and no bidirectional control (U+202A–U+202E, U+2066–U+2069), which would let a name render as
 * another (`"deploy\u202Eyrotcerid"`), break a line in a log or a terminal, or show as nothing.
 * Any other character is allowed: accents, every script, emoji. And, as every string the API
 * takes (§17), no unpaired UTF-16 surrogate.
 *
 * Checked by `nameProblem` (one pass over the UTF-16 units, no backtracking) and published as
 * NAME_PATTERN, the same rule as an ECMA-262 regular expression that reads alike with and without
 * the `u` flag (test/unit/readable-name.test.ts holds the two to each other).
 */

/**
 * The pattern: a lookahead refuses a name of white space alone, then every character must be
 * allowed: no control, no bidirectional control, no unpaired surrogate. `[^\S\uFEFF]` is
 * ECMA-262's `\s` less U+FEFF, which is `White_Space` less U+0085, a control refused anyway.
 */
export const NAME_PATTERN =
  "^(?![^\\S\\uFEFF]*$)" +
  "(?:[^\\x00-\\x1F\\x7F-\\x9F\\u2028-\\u202E\\u2066-\\u2069\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$";

const hex = (unit: number) => `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`;

const isControl = (unit: number) =>
  unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f) || unit === 0x2028 || unit === 0x2029;
const isBidiControl = (unit: number) =>
  (unit >= 0x202a && unit <= 0x202e) || (unit >= 0x2066 && unit <= 0x2069);
/** `White_Space` (the control characters among it are refused before this is asked). */
const isSpace = (unit: number) =>
  unit === 0x20 ||
  unit === 0xa0 ||
  unit === 0x1680 ||
  (unit >= 0x2000 && unit <= 0x200a) ||
  unit === 0x202f ||
  unit === 0x205f ||
  unit === 0x3000;

/** Why `name` is no readable name, or undefined when it is one. */
export function nameProblem(name: string): string | undefined {
  let visible = false;
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (isControl(unit)) {
      return `Must not contain a control character (U+0000–U+001F, U+007F–U+009F, U+2028, U+2029): ${hex(unit)} at ${i}.`;
    }
    if (isBidiControl(unit)) {
      return `Must not contain a bidirectional control (U+202A–U+202E, U+2066–U+2069): ${hex(unit)} at ${i}.`;
    }
    if (!visible && !isSpace(unit)) visible = true;
  }
  if (!visible) return "Must hold at least one character that is not white space.";
  if (!(name as string & { isWellFormed(): boolean }).isWellFormed()) {
    return "Must not contain unpaired UTF-16 surrogates.";
  }
  return undefined;
}
