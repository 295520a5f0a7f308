/** Keyset cursors (API_CONTRACT §4): pure encode/decode and page shaping. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  encodeSeqCursor,
  type PageRequest,
  pageRequest,
  type SortDirection,
  sortDirection,
  toPage,
} from "../../src/db/pagination";
import { ApiError } from "../../src/errors";
import { ID_ALPHABET } from "../../src/lib/ids";

const direction = fc.constantFrom<SortDirection>("asc", "desc");
/** Any code points (no lone surrogates): a filter key. */
const text = fc.string({ unit: "binary", maxLength: 32 });
/** A position as stored: a record's `created_at` (RFC 3339 UTC, milliseconds) and its identifier. */
const timestamp = fc
  .date({
    min: new Date("1970-01-01T00:00:00.000Z"),
    max: new Date("9999-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());
const base58 = fc.string({ unit: fc.constantFrom(...ID_ALPHABET), minLength: 22, maxLength: 22 });
const identifier = fc.oneof(
  base58,
  fc.uuid().map((u) => u.toLowerCase()),
  fc.uuid().map((u) => u.toLowerCase().replaceAll("-", "")),
);
const position = fc.record({ createdAt: timestamp, id: identifier });
const ID = "7Hq3VnT5m2WcXbQ9pLk4Rz";
const AT = "2026-01-01T00:00:00.000Z";

function decodeOrRefusal(raw: string, dir: SortDirection, filter: string) {
  try {
    return { ok: true as const, position: decodeCursor(raw, dir, filter) };
  } catch (err) {
    // Anything but a 400 bad_input would become a 500.
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("bad_input");
    expect((err as ApiError).cause).toEqual([{ path: "after", message: expect.any(String) }]);
    return { ok: false as const };
  }
}

describe("encodeCursor / decodeCursor", () => {
  it("round-trips any position and filter, and the cursor is standard base64", () => {
    fc.assert(
      fc.property(direction, text, position, (dir, filter, pos) => {
        const cursor = encodeCursor(dir, filter, pos.createdAt, pos.id);
        expect(cursor).toMatch(/^[a-zA-Z0-9+/=]+$/);
        expect(cursor.length % 4).toBe(0);
        expect(decodeCursor(cursor, dir, filter)).toEqual(pos);
      }),
      { numRuns: 500 },
    );
  });

  it("reads URL-safe, unpadded and space-for-plus forms as the same cursor", () => {
    fc.assert(
      fc.property(direction, text, position, (dir, filter, pos) => {
        const cursor = encodeCursor(dir, filter, pos.createdAt, pos.id);
        const urlSafe = cursor.replace(/\+/g, "-").replace(/\//g, "_");
        for (const form of [
          urlSafe,
          urlSafe.replace(/=+$/, ""),
          cursor.replace(/\+/g, " "),
          cursor.replace(/=+$/, ""),
        ]) {
          expect(decodeCursor(form, dir, filter)).toEqual(pos);
        }
      }),
    );
  });

  it("refuses a cursor made under the other direction or another filter", () => {
    fc.assert(
      fc.property(direction, text, text, position, (dir, filter, other, pos) => {
        const cursor = encodeCursor(dir, filter, pos.createdAt, pos.id);
        const flipped: SortDirection = dir === "asc" ? "desc" : "asc";
        expect(decodeOrRefusal(cursor, flipped, filter).ok).toBe(false);
        if (other !== filter) expect(decodeOrRefusal(cursor, dir, other).ok).toBe(false);
      }),
    );
  });

  it("a cursor of the other kind (a number where a position is read, or the reverse) is refused as such", () => {
    // An audit log's default order pages by position, `after_sequence` by number (§30): a cursor of
    // one given with the other is a cursor of another order or filter, not something undecodable.
    const numbered = encodeSeqCursor("timeline", 3);
    const positional = encodeCursor("asc", "", AT, ID);
    const why = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        return (err as ApiError).cause;
      }
      throw new Error("not refused");
    };
    const otherKind = [
      { path: "after", message: "Made under another sort order or filter, or for another list." },
    ];
    expect(why(() => decodeCursor(numbered, "asc", "timeline"))).toEqual(otherKind);
    expect(why(() => decodeSeqCursor(positional, "timeline"))).toEqual(otherKind);
    expect(why(() => decodeCursor(btoa("{}"), "asc", ""))).toEqual([
      { path: "after", message: "Does not decode to a cursor." },
    ]);
  });

  it("any mutation is refused with bad_input or decodes to a position that round-trips", () => {
    const mutation = fc.oneof(
      fc.record({
        kind: fc.constant("replace" as const),
        at: fc.nat(),
        ch: fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 1 }),
      }),
      fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), ch: fc.constant("") }),
      fc.record({
        kind: fc.constant("insert" as const),
        at: fc.nat(),
        ch: fc.constantFrom("A", "+", "/", "=", "-", "_", " ", "%", "{"),
      }),
    );
    fc.assert(
      fc.property(
        direction,
        text,
        position,
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (dir, filter, pos, mutations) => {
          let cursor = encodeCursor(dir, filter, pos.createdAt, pos.id);
          for (const m of mutations) {
            const at = m.at % (cursor.length + 1);
            cursor =
              m.kind === "insert"
                ? cursor.slice(0, at) + m.ch + cursor.slice(at)
                : cursor.slice(0, at) + m.ch + cursor.slice(at + 1);
          }
          const first = decodeOrRefusal(cursor, dir, filter);
          const again = decodeOrRefusal(cursor, dir, filter);
          expect(again).toEqual(first);
          if (first.ok && first.position) {
            const { createdAt, id } = first.position;
            expect(createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
            expect(id.length).toBeLessThanOrEqual(36);
            expect(decodeCursor(encodeCursor(dir, filter, createdAt, id), dir, filter)).toEqual(
              first.position,
            );
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("never throws anything but bad_input on arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), direction, (raw, dir) => {
        decodeOrRefusal(raw, dir, "");
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), direction, (value, dir) => {
        const bytes = new TextEncoder().encode(JSON.stringify(value) ?? "null");
        decodeOrRefusal(btoa(String.fromCharCode(...bytes)), dir, "");
      }),
      { numRuns: 500 },
    );
  });

  it("refuses non-cursor JSON, a wrong version and a position that is not a timestamp and an identifier", () => {
    const b64 = (v: unknown) => btoa(JSON.stringify(v));
    const base = { v: 1, o: "asc", f: "", c: AT, i: ID };
    expect(decodeOrRefusal(b64(base), "asc", "").ok).toBe(true);
    for (const bad of [
      { ...base, v: 2 },
      { ...base, o: "up" },
      { ...base, c: 5 },
      { ...base, i: null },
      { ...base, f: undefined },
      { ...base, c: "x".repeat(65) },
      { ...base, i: "x".repeat(65) },
      { ...base, c: "notadate" },
      { ...base, c: "2026-01-01" },
      { ...base, c: "2026-01-01T00:00:00Z" },
      // The stored form, but no instant: every field out of range, a 30th of February.
      { ...base, c: "9999-99-99T99:99:99.999Z" },
      { ...base, c: "2026-02-30T00:00:00.000Z" },
      { ...base, c: "2026-01-01T24:00:00.000Z" },
      { ...base, i: "x" },
      { ...base, i: "" },
      { ...base, i: "7HQ3VNT5M2WCXBQ9PLK4RZ0" },
      [base],
      "cursor",
      null,
    ]) {
      expect(decodeOrRefusal(b64(bad), "asc", "").ok, JSON.stringify(bad)).toBe(false);
    }
    for (const raw of ["", "=", "A", "AB=C", "####", "A===", btoa("\xff\xfe")]) {
      expect(decodeOrRefusal(raw, "asc", "").ok, raw).toBe(false);
    }
  });
});

describe("sort orders and pages", () => {
  it("`created_at` and `+created_at` are ascending; `-created_at` is descending", () => {
    expect(sortDirection("created_at")).toBe("asc");
    expect(sortDirection("+created_at")).toBe("asc");
    expect(sortDirection("-created_at")).toBe("desc");
    const asc = encodeCursor("asc", "", AT, ID);
    expect(pageRequest({ after: asc, limit: 5, sort_by: "+created_at" }).position).toEqual({
      createdAt: AT,
      id: ID,
    });
    expect(() => pageRequest({ after: asc, limit: 5, sort_by: "-created_at" })).toThrow(ApiError);
  });

  it("toPage: has_more and next_page only when a row beyond the limit was fetched", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 21 }),
        direction,
        (limit, n, dir) => {
          const fetched = Math.min(n, limit + 1);
          const rows = Array.from({ length: fetched }, (_, i) => ({
            createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
            id: `${ID.slice(0, 21)}${ID_ALPHABET[i]}`,
          }));
          const page: PageRequest = { direction: dir, limit, filter: "f" };
          const result = toPage(
            rows,
            page,
            (r) => r,
            (r) => r.id,
          );
          expect(result.data).toEqual(rows.slice(0, limit).map((r) => r.id));
          expect(result.has_more).toBe(fetched > limit);
          if (fetched > limit) {
            expect(decodeCursor(result.next_page as string, dir, "f")).toEqual(rows[limit - 1]);
          } else {
            expect("next_page" in result).toBe(false);
          }
        },
      ),
    );
  });
});
