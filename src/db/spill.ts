/**
 * JSON too large for one D1 row, kept in parts. D1 refuses a string or a row over 2,000,000 bytes
 * (and a bound value as large), and a few records list one line per name of a whole scope: an
 * audit entry's `changes` and a variable version's `changes` after a §18 replace, restore or
 * export of a scope that holds thousands of names (API_CONTRACT §18 lists every one). Such JSON
 * is written as consecutive parts, rows of a table of their own beside the record's (its
 * `changes_spilled` column says so), in the batch that writes the record, and put back together
 * by every reader of the record. Anything smaller stays in the record's own row, as before.
 */
import { utf8Bytes } from "../lib/utf8-bytes";

/** JSON up to this many UTF-8 bytes stays in the record's row, leaving room for its other columns. */
export const INLINE_JSON_BYTES = 1_500_000;
/** UTF-16 code units a part holds at most: ≤ 1,500,000 UTF-8 bytes, whatever the characters. */
export const PART_CHARS = 500_000;

/** `json` as it is stored: in the row (`parts` empty), or in parts (`inline` null). */
export type Spilled = { inline: string | null; parts: string[]; length: number };

/** How `json` is stored (see the file comment); never splits a surrogate pair between two parts. */
export function spill(json: string): Spilled {
  if (json.length <= INLINE_JSON_BYTES / 3 || utf8Bytes(json) <= INLINE_JSON_BYTES) {
    return { inline: json, parts: [], length: json.length };
  }
  const parts: string[] = [];
  for (let start = 0; start < json.length; ) {
    let end = Math.min(start + PART_CHARS, json.length);
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(json.slice(start, end));
    start = end;
  }
  return { inline: null, parts, length: json.length };
}

/** A record read with the column that says whether its `changes` are in parts (and how long). */
type SpillableRow = { changes: unknown; changesSpilled: number | null };

/**
 * `rows` with the `changes` of each spilled one put back together from its parts: one more query
 * (`partsOf(keys)`, answering `owner`, `part`, `chunk` rows for the records of `keyOf`), made only
 * when a row has parts. A record whose parts do not add up to its length is an error, never a
 * silently shortened list.
 */
export async function withSpilledChanges<R extends SpillableRow>(
  rows: R[],
  keyOf: (row: R) => string,
  partsOf: (keys: string[]) => D1PreparedStatement,
): Promise<R[]> {
  const lengths = new Map<string, number>();
  for (const row of rows) if (row.changesSpilled !== null) lengths.set(keyOf(row), row.changesSpilled);
  if (lengths.size === 0) return rows;
  const { results } = await partsOf([...lengths.keys()]).all<{
    owner: string;
    part: number;
    chunk: string;
  }>();
  const joined = new Map<string, unknown>();
  for (const [owner, length] of lengths) {
    const text = results
      .filter((row) => row.owner === owner)
      .sort((a, b) => a.part - b.part)
      .map((row) => row.chunk)
      .join("");
    if (text.length !== length) {
      throw new Error(`spilled JSON of ${owner}: ${text.length} of ${length} code units found`);
    }
    joined.set(owner, JSON.parse(text));
  }
  return rows.map((row) => {
    const key = keyOf(row);
    return joined.has(key) ? { ...row, changes: joined.get(key) } : row;
  });
}
