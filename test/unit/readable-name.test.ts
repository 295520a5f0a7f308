/**
 * A readable name (API_CONTRACT §33, src/lib/readable-name.ts): the check and the published
 * pattern, each against the contract's lists of characters, and against each other for every
 * UTF-16 unit alone, around a letter, and for any string, with and without the `u` flag.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NAME_PATTERN, nameProblem } from "../../src/lib/readable-name";

/** Unicode `White_Space` (PropList.txt), every one of its 25 code points. */
const WHITE_SPACE = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
  0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const CONTROLS = [...range(0x00, 0x1f), ...range(0x7f, 0x9f), 0x2028, 0x2029];
const BIDI = [...range(0x202a, 0x202e), ...range(0x2066, 0x2069)];
const plain = new RegExp(NAME_PATTERN);
const unicode = new RegExp(NAME_PATTERN, "u");
const readable = (name: string) => nameProblem(name) === undefined;

describe("a readable name", () => {
  it.each([
    ["Storefront"],
    ["  padded  "],
    ["Café déjà vu"],
    ["生产环境"],
    ["производство"],
    ["עברית ومعها العربية"],
    ["🚀 launch"],
    ["👩🏽‍💻"],
    ["\u00A0x\u3000"],
    ["\u200B"], // ZERO WIDTH SPACE is no White_Space
    ["a\uFEFFb"], // nor is the byte order mark
    ["\u{1D400}"], // outside the BMP
  ])("takes %j", (name) => {
    expect(nameProblem(name)).toBeUndefined();
    expect(plain.test(name) && unicode.test(name)).toBe(true);
  });

  it("refuses a name of white space alone, each White_Space character alone or with spaces", () => {
    expect(nameProblem("")).toMatch(/not white space/);
    for (const cp of WHITE_SPACE) {
      const name = ` ${String.fromCodePoint(cp)}\u00A0`;
      expect(readable(name), `U+${cp.toString(16)}`).toBe(false);
      expect(plain.test(name) || unicode.test(name)).toBe(false);
    }
  });

  it("refuses every control and bidirectional control, wherever it stands, naming it", () => {
    for (const cp of [...CONTROLS, ...BIDI]) {
      const ch = String.fromCodePoint(cp);
      for (const name of [ch, `a${ch}`, `${ch}a`, `ab${ch}cd`]) {
        expect(nameProblem(name), name).toContain(`U+${cp.toString(16).toUpperCase().padStart(4, "0")}`);
        expect(plain.test(name) || unicode.test(name)).toBe(false);
      }
    }
  });

  it("refuses unpaired surrogates", () => {
    for (const name of ["a\uD800", "\uDC00a", "a\uDC00\uD800b"]) {
      expect(nameProblem(name)).toMatch(/surrogate/);
      expect(plain.test(name)).toBe(false);
    }
  });

  it("is the pattern's rule for every UTF-16 unit alone and beside a letter", () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const ch = String.fromCharCode(unit);
      for (const name of [ch, `${ch}x`, `x${ch}`, ` ${ch} `]) {
        if (readable(name) !== plain.test(name))
          expect(plain.test(name), `U+${unit.toString(16)}`).toBe(readable(name));
      }
    }
  });

  it("is the pattern's rule, with and without `u`, for any string", () => {
    const special = fc.constantFrom(
      ...[...WHITE_SPACE, ...CONTROLS, ...BIDI, 0x41, 0xe9, 0x200b, 0xd800, 0xdc00].map((cp) =>
        String.fromCharCode(cp),
      ),
      "\u{1F680}",
    );
    const name = fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.array(special, { maxLength: 8 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(name, (value) => {
        expect(plain.test(value)).toBe(readable(value));
        if ((value as string & { isWellFormed(): boolean }).isWellFormed())
          expect(unicode.test(value)).toBe(readable(value));
      }),
      { numRuns: 5_000 },
    );
  });
});
