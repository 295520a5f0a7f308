/** Identifiers (API_CONTRACT §2): generation and the three accepted forms. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeId, ID_ALPHABET, ID_PATTERN, isId, newId } from "../../src/lib/ids";

const HEX = "0123456789abcdef";
const chars = (alphabet: string, length: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength: length, maxLength: length });
const base58 = (length = 22) => chars(ID_ALPHABET, length);
const hex = (length: number) => chars(HEX, length);
const uuid = fc.tuple(hex(8), hex(4), hex(4), hex(4), hex(12)).map((parts) => parts.join("-"));

function decode(id: string): bigint {
  let n = 0n;
  for (const ch of id) n = n * 58n + BigInt(ID_ALPHABET.indexOf(ch));
  return n;
}

describe("newId", () => {
  it("is always 22 characters of the alphabet, and an accepted ID", () => {
    fc.assert(
      fc.property(fc.nat(), () => {
        const id = newId();
        expect(id).toHaveLength(22);
        for (const ch of id) expect(ID_ALPHABET).toContain(ch);
        expect(isId(id)).toBe(true);
        expect(decode(id) < 2n ** 128n).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("does not repeat, and uses the whole alphabet in every position but the first", () => {
    const ids = Array.from({ length: 20_000 }, newId);
    expect(new Set(ids).size).toBe(ids.length);
    for (let pos = 1; pos < 22; pos++) {
      expect(new Set(ids.map((id) => id[pos])).size, `position ${pos}`).toBe(58);
    }
  });

  it("encodes 128 bits exactly as base58 of the 128-bit number, zero-padded to 22 digits", () => {
    const check = (values: number[]) => {
      const n = values.reduce((acc, x) => (acc << 32n) | BigInt(x), 0n);
      const id = encodeId(Uint32Array.from(values));
      expect(id).toHaveLength(22);
      expect(decode(id)).toBe(n);
    };
    check([0, 0, 0, 0]);
    check([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 4, maxLength: 4 }), check),
    );
  });

  it("the alphabet is 58 distinct characters without 0, O, I and l", () => {
    expect(new Set(ID_ALPHABET).size).toBe(58);
    for (const ch of "0OIl") expect(ID_ALPHABET).not.toContain(ch);
  });
});

describe("ID_PATTERN", () => {
  it("accepts any 22-character base58 string", () => {
    fc.assert(
      fc.property(base58(), (id) => {
        expect(isId(id)).toBe(true);
      }),
    );
  });

  it("accepts lowercase UUIDs and 32-character lowercase hex", () => {
    fc.assert(
      fc.property(uuid, (id) => {
        expect(isId(id)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(hex(32), (id) => {
        expect(isId(id)).toBe(true);
      }),
    );
    expect(isId("0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c")).toBe(true);
    expect(isId("00000000000000000000000000000000")).toBe(true);
  });

  it("refuses uppercase UUIDs and uppercase hex", () => {
    const withUpper = (s: string) => /[a-f]/.test(s);
    fc.assert(
      fc.property(uuid.filter(withUpper), (id) => {
        expect(isId(id.toUpperCase())).toBe(false);
      }),
    );
    fc.assert(
      fc.property(
        hex(32).filter((s) => /[a-f]/.test(s) && /0/.test(s)),
        (id) => {
          expect(isId(id.toUpperCase())).toBe(false);
        },
      ),
    );
    expect(isId("0B9F6A3C-1D2E-4F5A-8B7C-9D0E1F2A3B4C")).toBe(false);
  });

  it("refuses wrong lengths of every form", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }).filter((n) => n !== 22 && n !== 32),
        (n) => {
          fc.assert(
            fc.property(base58(n), (id) => {
              expect(isId(id)).toBe(false);
            }),
            { numRuns: 5 },
          );
        },
      ),
    );
    fc.assert(
      fc.property(hex(31), (id) => {
        expect(isId(id)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(hex(33), (id) => {
        expect(isId(id)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(uuid, (id) => {
        expect(isId(`${id}a`)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(uuid, (id) => {
        expect(isId(id.slice(1))).toBe(false);
      }),
    );
    fc.assert(
      fc.property(uuid, (id) => {
        expect(isId(id.replace(/-/g, "_"))).toBe(false);
      }),
    );
  });

  it("refuses a 22-character string holding an excluded character (0, O, I, l) or anything else", () => {
    fc.assert(
      fc.property(
        base58(),
        fc.integer({ min: 0, max: 21 }),
        fc.constantFrom("0", "O", "I", "l", "-", "_", " ", "+", "é", "\n"),
        (id, at, bad) => {
          expect(isId(id.slice(0, at) + bad + id.slice(at + 1))).toBe(false);
        },
      ),
    );
  });

  it("is anchored at both ends (no trailing newline, no prefix)", () => {
    const id = newId();
    for (const wrapped of [`${id}\n`, `\n${id}`, ` ${id}`, `${id} `, `x${id}`]) {
      expect(isId(wrapped)).toBe(false);
    }
    expect(ID_PATTERN.flags).not.toMatch(/[mi]/);
  });
});
