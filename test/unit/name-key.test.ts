/**
 * The key names are unique under (src/lib/name-key.ts) is the key stored before it existed,
 * `name.normalize("NFC").toLocaleLowerCase("und")`, for every string: rows written by either
 * compare equal, and the unique indexes keep meaning what they meant. Runs in the Workers
 * runtime, whose ICU answers the locale-aware call.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nameKey } from "../../src/lib/name-key";

const stored = (name: string) => name.normalize("NFC").toLocaleLowerCase("und");

describe("nameKey", () => {
  it("is the key stored before, for the characters whose lower case is special", () => {
    const names = [
      "Production",
      "ΟΔΟΣ", // final sigma: ς at the end of a word, σ inside it
      "ὈΔΥΣΣΕΎΣ",
      "İstanbul", // U+0130: i + combining dot above by default, not Turkish i
      "DIŞ", // U+015E, Turkish dotless ı stays as it is
      "STRASSE ẞ ß",
      "\u212A Kelvin", // the Kelvin sign lowers to k
      "ǅ Ǆ ǆ", // titlecase digraphs
      "Å Å", // U+212B ANGSTROM and A + combining ring: one key after NFC
      "ΣΑ Σ", // a sigma alone, and one before a space
      "𐐀𐐁", // Deseret: outside the BMP
      "",
    ];
    for (const name of names) expect(nameKey(name), name).toBe(stored(name));
  });

  it("is the key stored before, for any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (name) => {
        expect(nameKey(name)).toBe(stored(name));
      }),
      { numRuns: 5000 },
    );
  });

  it("is the key stored before, for every code point alone and after a letter", () => {
    // The stored key of thousands of names at once: joined by a line feed, which neither NFC nor
    // lower-casing crosses (a starter that composes with nothing; neither cased nor case-ignorable,
    // so no Final_Sigma context reaches over it), then split. One locale-aware call per name cost
    // 12 s of CPU here, one per 4,096 names costs a fraction; every 61st name is also keyed alone,
    // and the line feed's own names are.
    const names: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if ((cp >= 0xd800 && cp <= 0xdfff) || cp === 0x0a) continue;
      const ch = String.fromCodePoint(cp);
      names.push(ch, `A${ch}`);
    }
    for (const name of ["\n", "A\n"]) expect(nameKey(name)).toBe(stored(name));
    const CHUNK = 4096;
    for (let i = 0; i < names.length; i += CHUNK) {
      const chunk = names.slice(i, i + CHUNK);
      const keys = stored(chunk.join("\n")).split("\n");
      expect(keys.length).toBe(chunk.length);
      chunk.forEach((name, j) => {
        const cp = `U+${name.codePointAt((i + j) % 2 === 0 ? 0 : 1)?.toString(16)}`; // alone, after "A"
        if ((i + j) % 61 === 0) expect(keys[j], `${cp} keyed alone`).toBe(stored(name));
        if (nameKey(name) !== keys[j]) expect(nameKey(name), cp).toBe(keys[j]);
      });
    }
  });
});
