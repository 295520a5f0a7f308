import { describe, expect, it } from "vitest";
import { INLINE_JSON_BYTES, PART_CHARS, spill, withSpilledChanges } from "../../src/db/spill";
import { utf8Bytes } from "../../src/lib/utf8-bytes";

/** One record `e1` of `length` spilled code units, read back from `results` as D1 would answer them. */
const readBack = (length: number, results: { owner: string; part: number; chunk: string }[]) =>
  withSpilledChanges(
    [{ id: "e1", changes: null as unknown, changesSpilled: length }],
    (row) => row.id,
    () => ({ all: async () => ({ results }) }) as unknown as D1PreparedStatement,
  );

describe("spill", () => {
  it("keeps JSON in the row up to INLINE_JSON_BYTES of UTF-8, counted in bytes, not characters", () => {
    const ascii = JSON.stringify("x".repeat(INLINE_JSON_BYTES - 2));
    expect(spill(ascii)).toEqual({ inline: ascii, parts: [], length: ascii.length });
    // Fewer characters, but three bytes each: over the limit, so in parts.
    const wide = JSON.stringify("€".repeat(INLINE_JSON_BYTES / 3));
    expect(spill(wide).inline).toBeNull();
  });

  it("cuts parts of at most PART_CHARS, each within D1's limit, never between the halves of a surrogate pair, joined back exactly", async () => {
    // An emoji (a surrogate pair) straddling every cut a plain slice would make.
    const json = JSON.stringify(`${"a".repeat(PART_CHARS - 2)}${"😀".repeat(PART_CHARS)}`);
    const { inline, parts, length } = spill(json);
    expect(inline).toBeNull();
    expect(length).toBe(json.length);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(PART_CHARS);
      expect(utf8Bytes(part)).toBeLessThanOrEqual(INLINE_JSON_BYTES);
      // No part ends in a high surrogate or starts with a low one.
      expect(/[\uD800-\uDBFF]$/.test(part) || /^[\uDC00-\uDFFF]/.test(part)).toBe(false);
    }
    expect(parts.join("")).toBe(json);
    // Read back in any order.
    const rows = parts.map((chunk, part) => ({ owner: "e1", part, chunk })).reverse();
    const [joined] = await readBack(length, rows);
    expect(joined?.changes).toEqual(JSON.parse(json));
  });

  it("refuses parts that do not add up to the recorded length", async () => {
    const { parts, length } = spill(JSON.stringify(["x".repeat(PART_CHARS * 3)]));
    const rows = parts.slice(1).map((chunk, part) => ({ owner: "e1", part: part + 1, chunk }));
    await expect(readBack(length, rows)).rejects.toThrow(/code units found/);
  });
});
