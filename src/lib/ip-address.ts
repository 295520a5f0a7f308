/**
 * Who a client is, for the `anonymous` rate-limit policy (API_CONTRACT §7, §22): an IPv4 client by
 * its address, an IPv6 client by its /64. A single IPv6 host is normally handed a whole /64 (SLAAC,
 * privacy addresses), so counting its addresses one by one would give it 2^64 windows.
 *
 * Every spelling of one address counts as one client: `::` expanded, hex digits in any case,
 * leading zeros, an embedded dotted IPv4 tail, a zone (`%eth0`) or brackets; and an IPv4-mapped
 * IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket reports) is its IPv4 address.
 */

/** The client an address counts as: `192.0.2.1`, or `2001:db8:0:1::/64`; anything else as given. */
export function anonymousClient(address: string): string {
  const text = address.trim();
  const v4 = parseIPv4(text);
  if (v4) return v4.join(".");
  const v6 = parseIPv6(text);
  if (!v6) return text;
  if (isIPv4Mapped(v6)) {
    const [hi = 0, lo = 0] = v6.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
  }
  return `${v6
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(":")}::/64`;
}

/** `a.b.c.d`, four decimal octets of 0–255 (leading zeros read as decimal), or undefined. */
export function parseIPv4(text: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address in any RFC 4291 §2.2 spelling, or undefined. */
export function parseIPv6(text: string): number[] | undefined {
  const bare = text.replace(/^\[(.*)\]$/, "$1").replace(/%[^%]*$/, "");
  if (!bare.includes(":")) return undefined;
  const halves = bare.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      const v4 = i === pieces.length - 1 ? parseIPv4(piece) : undefined;
      if (v4) {
        const [a = 0, b = 0, c = 0, d = 0] = v4;
        out.push((a << 8) | b, (c << 8) | d);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(Number.parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "") : [];
  if (!head || !tail) return undefined;
  // A dotted IPv4 tail may only end the address.
  if (halves.length === 2 && head.length > 0 && /\./.test(halves[0] ?? "")) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
}

/** `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2). */
const isIPv4Mapped = (groups: number[]) => groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
