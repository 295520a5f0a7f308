/**
 * The dotenv format of API_CONTRACT §18, both ways. Pure: no I/O.
 *
 * Export writes one `NAME="value"` line per variable, sorted by name, escaping `\` as `\\`, `"` as
 * `\"`, a newline as `\n` and a carriage return as `\r`, and nothing else. Import reads lines split
 * at `\n` or `\r\n`: blank lines and lines whose first non-blank character is `#` are skipped; an
 * entry is an optional `export ` prefix, then `NAME=value` with NAME as §3 names a variable; a
 * value in double quotes takes the four escapes (and cannot span lines), in single quotes it is
 * literal, unquoted it is trimmed and ends at ` #` (a comment). After a closing quote only blanks
 * and a comment may follow. So importing an export gives back exactly what was exported.
 */

export type DotenvEntry = { name: string; value: string };
/** A line that is not an entry: its 1-based number and why. */
export type DotenvIssue = { line: number; message: string };

/** API_CONTRACT §3: a variable's name. */
export const VARIABLE_NAME = /^[A-Za-z_]\w*$/;
export const MAX_NAME_LENGTH = 255;

const ESCAPES: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r" };
const UNESCAPES: Record<string, string> = { "\\": "\\", '"': '"', n: "\n", r: "\r" };

/** The dotenv file of `entries`, one line each, sorted by name (UTF-16 code unit order). */
export function formatDotenv(entries: readonly DotenvEntry[]): string {
  return [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, value }) => `${name}="${value.replace(/[\\"\n\r]/g, (c) => ESCAPES[c] as string)}"\n`)
    .join("");
}

/** What may follow a closing quote: blanks, then nothing or a comment. */
const AFTER_QUOTE = /^[ \t]*(#.*)?$/;
const EXPORT_PREFIX = /^export[ \t]+/;

type Parsed = { value: string } | { error: string };

function doubleQuoted(text: string): Parsed {
  let value = "";
  for (let i = 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      if (!AFTER_QUOTE.test(text.slice(i + 1))) {
        return { error: "Only blanks and a `#` comment may follow the closing quote." };
      }
      return { value };
    }
    if (c === "\\" && i + 1 < text.length) {
      const next = text[i + 1] as string;
      // The four escapes; any other backslash is kept as it is.
      const unescaped = UNESCAPES[next];
      if (unescaped !== undefined) {
        value += unescaped;
        i++;
        continue;
      }
    }
    value += c;
  }
  return { error: 'The double-quoted value has no closing `"` on its line (a value cannot span lines).' };
}

function singleQuoted(text: string): Parsed {
  const end = text.indexOf("'", 1);
  if (end < 0) return { error: "The single-quoted value has no closing `'` on its line." };
  if (!AFTER_QUOTE.test(text.slice(end + 1))) {
    return { error: "Only blanks and a `#` comment may follow the closing quote." };
  }
  return { value: text.slice(1, end) };
}

function unquoted(text: string): Parsed {
  const comment = text.indexOf(" #");
  return { value: (comment < 0 ? text : text.slice(0, comment)).trim() };
}

/** One line: skipped (null), an entry, or why it is neither. */
function parseLine(line: string): DotenvEntry | null | { error: string } {
  const text = line.replace(/^[ \t]+/, "");
  if (text.trim() === "" || text.startsWith("#")) return null;
  const entry = text.replace(EXPORT_PREFIX, "");
  const eq = entry.indexOf("=");
  if (eq < 0) return { error: "Expected `NAME=value`, a blank line or a `#` comment." };
  const name = entry.slice(0, eq);
  if (!VARIABLE_NAME.test(name)) {
    return { error: `\`${name.slice(0, 40)}\` is not a variable name: it must match ^[A-Za-z_][\\w]*$.` };
  }
  if (name.length > MAX_NAME_LENGTH)
    return { error: `The name is longer than ${MAX_NAME_LENGTH} characters.` };
  const raw = entry.slice(eq + 1);
  const rest = raw.replace(/^[ \t]+/, "");
  // Unquoted, the blanks before the value count: `A= #note` is an empty value and a comment.
  const parsed = rest.startsWith('"')
    ? doubleQuoted(rest)
    : rest.startsWith("'")
      ? singleQuoted(rest)
      : unquoted(raw);
  return "error" in parsed ? parsed : { name, value: parsed.value };
}

/**
 * The entries of a dotenv text, in file order, with each line's number; or the lines that are
 * not entries, the first `maxIssues` of them (past that, reading on would only make a longer
 * refusal). A name given twice is an issue at its second line.
 */
export function parseDotenv(
  text: string,
  maxIssues = Number.POSITIVE_INFINITY,
): { entries: Array<DotenvEntry & { line: number }> } | { issues: DotenvIssue[] } {
  const entries: Array<DotenvEntry & { line: number }> = [];
  const issues: DotenvIssue[] = [];
  const seen = new Map<string, number>();
  // A byte order mark, as some editors write one, is not part of the first line.
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const number = index + 1;
    const parsed = parseLine(line);
    if (parsed === null) continue;
    if ("error" in parsed) {
      issues.push({ line: number, message: parsed.error });
      if (issues.length >= maxIssues) break;
      continue;
    }
    const first = seen.get(parsed.name);
    if (first !== undefined) {
      issues.push({ line: number, message: `\`${parsed.name}\` is already given on line ${first}.` });
      if (issues.length >= maxIssues) break;
      continue;
    }
    seen.set(parsed.name, number);
    entries.push({ ...parsed, line: number });
  }
  return issues.length > 0 ? { issues } : { entries };
}
