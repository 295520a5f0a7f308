/** Who a client is for the `anonymous` policy (src/lib/ip-address.ts, API_CONTRACT §22): IPv4 by address, IPv6 by /64. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anonymousClient, parseIPv4, parseIPv6 } from "../../src/lib/ip-address";

const group = fc.integer({ min: 0, max: 0xffff });
const address = fc.array(group, { minLength: 8, maxLength: 8 });
const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet);

/** Each group in lower or upper case, with or without leading zeros (`0db8`, `DB8`). */
function written(groups: number[], zeros: boolean[], upper: boolean[]): string[] {
  return groups.map((g, i) => {
    const hex = g.toString(16).padStart(zeros[i] ? 4 : 1, "0");
    return upper[i] ? hex.toUpperCase() : hex;
  });
}

/** The groups with the run `[from, to)` written as `::` (RFC 4291 §2.2). */
function compressed(parts: string[], from: number, to: number): string {
  return `${parts.slice(0, from).join(":")}::${parts.slice(to).join(":")}`;
}

/** Every spelling of one address that RFC 4291 allows: a zero run as `::`, case, leading zeros, brackets, a zone. */
const spelling = fc
  .record({
    groups: address,
    zeros: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    upper: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    run: fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 })),
    wrap: fc.constantFrom("", "[]", "%eth0"),
  })
  .map(({ groups, zeros, upper, run, wrap }) => {
    // Zero the chosen run (possibly empty), so that `::` may stand for it.
    const [a, b] = run[0] <= run[1] ? run : [run[1], run[0]];
    const value = groups.map((g, i) => (i >= a && i < b ? 0 : g));
    const shown = written(value, zeros, upper);
    const text = b > a ? compressed(shown, a, b) : shown.join(":");
    const spelled = wrap === "[]" ? `[${text}]` : `${text}${wrap}`;
    return { value, text: spelled };
  });

describe("parseIPv6", () => {
  it("reads every spelling of an address as its eight groups, as the WHATWG URL parser does", () => {
    fc.assert(
      fc.property(spelling, ({ value, text }) => {
        expect(parseIPv6(text)).toEqual(value);
        const bare = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
        const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
        expect(parseIPv6(canonical)).toEqual(value);
      }),
    );
  });

  it("reads a dotted IPv4 tail as the last two groups", () => {
    expect(parseIPv6("::ffff:192.0.2.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201]);
    expect(parseIPv6("64:ff9b::198.51.100.7")).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc633, 0x6407]);
  });

  it.each([
    [""],
    ["1:2:3:4:5:6:7"],
    ["1:2:3:4:5:6:7:8:9"],
    ["1::2::3"],
    ["12345::1"],
    ["g::1"],
    [":1:2:3:4:5:6:7"],
    ["1:2:3:4:5:6:7:8::"],
    ["1.2.3.4::1"],
    ["::1.2.3.256"],
    ["example.com"],
  ])("is no address: %s", (text) => {
    expect(parseIPv6(text)).toBeUndefined();
  });
});

describe("anonymousClient", () => {
  it("counts an IPv6 client by its /64: every address and spelling inside one /64 is one client", () => {
    fc.assert(
      fc.property(spelling, address, ({ value, text }, other) => {
        fc.pre(!(value.slice(0, 5).every((g) => g === 0) && value[5] === 0xffff));
        const sameNetwork = [...value.slice(0, 4), ...other.slice(4)];
        const prefix = value
          .slice(0, 4)
          .map((g) => g.toString(16))
          .join(":");
        expect(anonymousClient(text)).toBe(`${prefix}::/64`);
        const sibling = sameNetwork.map((g) => g.toString(16)).join(":");
        expect(anonymousClient(sibling)).toBe(anonymousClient(text));
      }),
    );
  });

  it("tells apart two addresses whose first 64 bits differ", () => {
    fc.assert(
      fc.property(address, address, (a, b) => {
        fc.pre(a.slice(0, 4).join() !== b.slice(0, 4).join());
        const mapped = (g: number[]) => g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
        fc.pre(!mapped(a) && !mapped(b));
        const text = (g: number[]) => g.map((x) => x.toString(16)).join(":");
        expect(anonymousClient(text(a))).not.toBe(anonymousClient(text(b)));
      }),
    );
  });

  it("counts an IPv4 client by its address, also when a dual-stack socket maps it into IPv6", () => {
    fc.assert(
      fc.property(ipv4, ([a, b, c, d]) => {
        const dotted = `${a}.${b}.${c}.${d}`;
        const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
        for (const text of [
          dotted,
          ` ${dotted} `,
          `::ffff:${dotted}`,
          `::FFFF:${hex(a, b)}:${hex(c, d)}`,
          `0:0:0:0:0:ffff:${dotted}`,
          `[::ffff:${dotted}]`,
        ]) {
          expect(anonymousClient(text), text).toBe(dotted);
        }
        // Its neighbour is another client: no prefix of IPv4 is pooled.
        expect(anonymousClient(`${a}.${b}.${c}.${(d + 1) % 256}`)).not.toBe(dotted);
      }),
    );
  });

  it("keeps what is no address as it came (a missing header counts as `unknown`)", () => {
    expect(anonymousClient("unknown")).toBe("unknown");
    expect(anonymousClient("1::2::3")).toBe("1::2::3");
    expect(parseIPv4("010.1.1.1")).toEqual([10, 1, 1, 1]);
    expect(parseIPv4("1.2.3.256")).toBeUndefined();
  });
});
