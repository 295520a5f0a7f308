/** The dotenv format of API_CONTRACT §18 (src/lib/dotenv.ts), both ways. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatDotenv, parseDotenv } from "../../src/lib/dotenv";

const entriesOf = (text: string) => {
  const parsed = parseDotenv(text);
  if ("issues" in parsed) throw new Error(JSON.stringify(parsed.issues));
  return parsed.entries.map(({ name, value }) => ({ name, value }));
};
const issuesOf = (text: string) => {
  const parsed = parseDotenv(text);
  return "issues" in parsed ? parsed.issues.map((i) => i.line) : [];
};

describe("formatDotenv", () => {
  it('writes NAME="value" lines sorted by name, escaping exactly \\, ", newline and carriage return', () => {
    expect(
      formatDotenv([
        { name: "b", value: "x" },
        { name: "A", value: "a\\b\"c\nd\re\tf #g 'h' $i ✓" },
        { name: "_", value: "" },
      ]),
    ).toBe('A="a\\\\b\\"c\\nd\\re\tf #g \'h\' $i ✓"\n_=""\nb="x"\n');
    expect(formatDotenv([])).toBe("");
  });
});

describe("parseDotenv", () => {
  it("skips blank and comment lines, takes an `export ` prefix, and reads the three kinds of value", () => {
    const text = [
      "# comment",
      "   # indented comment",
      "",
      "   ",
      "export A=plain value  # a comment",
      'B="esc \\\\ \\" \\n \\r \\t"  # after',
      "C='lit \\n \"x\"' ",
      "D=a#b",
      "E= #only a comment",
      "F=",
      "  G=  spaced  ",
      'H=""',
      "export=1",
      "I=x=y",
    ].join("\n");
    expect(entriesOf(text)).toEqual([
      { name: "A", value: "plain value" },
      { name: "B", value: 'esc \\ " \n \r \\t' },
      { name: "C", value: 'lit \\n "x"' },
      { name: "D", value: "a#b" },
      { name: "E", value: "" },
      { name: "F", value: "" },
      { name: "G", value: "spaced" },
      { name: "H", value: "" },
      { name: "export", value: "1" },
      { name: "I", value: "x=y" },
    ]);
  });

  it("splits at \\n and \\r\\n (a lone \\r is part of a line), and ignores a byte order mark", () => {
    expect(entriesOf("\uFEFFA=1\r\nB=2\nC='x\ry'\r\n")).toEqual([
      { name: "A", value: "1" },
      { name: "B", value: "2" },
      { name: "C", value: "x\ry" },
    ]);
  });

  it("names every line that is not an entry, 1-based, and a name given twice at its second line", () => {
    expect(issuesOf("A=1\nnot an entry\n1A=2\nA-B=3\n=4\nB\n")).toEqual([2, 3, 4, 5, 6]);
    expect(issuesOf('A="unterminated\nB="x"y\nC=\'x\nD="a" # ok\nE=\'a\' tail')).toEqual([1, 2, 3, 5]);
    expect(issuesOf("A=1\n\nB=2\nA=3")).toEqual([4]);
    expect(issuesOf(`${"A".repeat(256)}=x`)).toEqual([1]);
    expect(issuesOf(`${"A".repeat(255)}=x`)).toEqual([]);
    // A name is followed by `=` at once (§3 names have no blanks).
    expect(issuesOf("A =1")).toEqual([1]);
  });

  it("import ∘ export is the identity, for any names and values (quotes, backslashes, newlines, CR, #, unicode)", () => {
    const name = fc
      .tuple(fc.constantFrom("A", "z", "_", "DB_", "x_1"), fc.nat(99_999))
      .map(([head, n]) => `${head}${n}`);
    const value = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.string({
        unit: fc.constantFrom("\\", '"', "'", "\n", "\r", "#", " ", "\t", "=", "n", "r", "✓", "𝄞"),
      }),
      fc
        .string({ unit: "binary", maxLength: 24 })
        .filter((s) => (s as string & { isWellFormed(): boolean }).isWellFormed()),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ name, value }), { selector: (e) => e.name, maxLength: 8 }),
        (entries) => {
          const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          return JSON.stringify(entriesOf(formatDotenv(entries))) === JSON.stringify(sorted);
        },
      ),
      { numRuns: 150 },
    );
  });
});
