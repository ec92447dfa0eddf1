// The SSRF address classifier. URL parsers, resolvers and libc each accept their
// own spellings of an address (`2130706433`, `0x7f.1`, `017700000001`,
// `::ffff:7f00:1`, `127.0.0.1.`), so Warden parses every spelling itself into
// bytes and classifies the bytes, unwrapping IPv6 forms that embed an IPv4
// address (mapped, compatible, NAT64, 6to4, Teredo). Anything not plainly public
// unicast is blocked; loopback can be let through by an explicit option.

export type AddressCategory =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "unique_local"
  | "cgnat"
  | "multicast"
  | "broadcast"
  | "unspecified"
  | "metadata"
  | "reserved";

export interface ParsedAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** One IPv4 part in inet_aton syntax: decimal, 0x hex or 0-prefixed octal. */
function parseV4Part(part: string): number | undefined {
  if (part === "") return undefined;
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === "") return 0;
  } else if (part.length > 1 && part.startsWith("0")) {
    radix = 8;
    digits = part.slice(1);
  }
  const re = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!re.test(digits)) return undefined;
  const n = Number.parseInt(digits, radix);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** IPv4 in every form inet_aton accepts: a, a.b, a.b.c, a.b.c.d with any radix per part. */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length < 1 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    const n = parseV4Part(p);
    if (n === undefined) return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  for (const n of nums) if (n > 255) return undefined;
  const lastBytes = 4 - nums.length;
  if (last >= 2 ** (8 * lastBytes)) return undefined;
  const out = new Uint8Array(4);
  nums.forEach((n, i) => {
    out[i] = n;
  });
  for (let i = 0; i < lastBytes; i++) out[3 - i] = Math.floor(last / 256 ** i) % 256;
  return out;
}

/** IPv6 text (with optional embedded dotted IPv4 tail and optional %zone) into 16 bytes. */
export function parseIPv6(text: string): Uint8Array | undefined {
  let s = text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!/^[0-9a-f:.]+$/i.test(s) || !s.includes(":")) return undefined;
  const lastColon = s.lastIndexOf(":");
  const after = s.slice(lastColon + 1);
  if (after.includes(".")) {
    // Only strict dotted-quad is valid inside IPv6 text; rewrite it as two groups.
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(after)) return undefined;
    const v4 = after.split(".").map(Number);
    if (v4.some((n) => n > 255)) return undefined;
    const hi = (((v4[0] as number) << 8) | (v4[1] as number)).toString(16);
    const lo = (((v4[2] as number) << 8) | (v4[3] as number)).toString(16);
    s = `${s.slice(0, lastColon + 1)}${hi}:${lo}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const parseGroups = (h: string): number[] | undefined => {
    if (h === "") return [];
    const out: number[] = [];
    for (const g of h.split(":")) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0] ?? "");
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
  if (head === undefined || rest === undefined) return undefined;
  const given = head.length + rest.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - given).fill(0), ...rest];
  } else {
    if (given !== 8) return undefined;
    groups = head;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/**
 * Parses a host as an IP address in any spelling (brackets and one trailing dot
 * allowed). Returns undefined for host names.
 */
export function parseAddress(host: string): ParsedAddress | undefined {
  let h = host.trim();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (h.includes(":")) {
    const b = parseIPv6(h);
    return b === undefined ? undefined : { family: 6, bytes: b };
  }
  if (!/^[0-9a-fx.]+$/i.test(h)) return undefined;
  const b = parseIPv4(h);
  return b === undefined ? undefined : { family: 4, bytes: b };
}

function inV4(b: Uint8Array, net: readonly number[], bits: number): boolean {
  for (let i = 0; i < 4; i++) {
    const maskBits = Math.max(0, Math.min(8, bits - 8 * i));
    const mask = maskBits === 0 ? 0 : (0xff << (8 - maskBits)) & 0xff;
    if (((b[i] as number) & mask) !== ((net[i] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_RULES: readonly [readonly number[], number, AddressCategory][] = [
  [[169, 254, 169, 254], 32, "metadata"],
  [[168, 63, 129, 16], 32, "metadata"],
  [[100, 100, 100, 200], 32, "metadata"],
  [[255, 255, 255, 255], 32, "broadcast"],
  [[0, 0, 0, 0], 8, "unspecified"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "cgnat"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link_local"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved"],
  [[192, 0, 2, 0], 24, "reserved"],
  [[192, 88, 99, 0], 24, "reserved"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "reserved"],
  [[198, 51, 100, 0], 24, "reserved"],
  [[203, 0, 113, 0], 24, "reserved"],
  [[224, 0, 0, 0], 4, "multicast"],
  [[240, 0, 0, 0], 4, "reserved"],
];

export function classifyIPv4(b: Uint8Array): AddressCategory {
  for (const [net, bits, cat] of V4_RULES) if (inV4(b, net, bits)) return cat;
  return "public";
}

function hasPrefix(b: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const maskBits = Math.min(8, bits - 8 * i);
    const mask = (0xff << (8 - maskBits)) & 0xff;
    if (((b[i] as number) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The IPv4 address an IPv6 address carries, for forms that route to it. */
export function embeddedIPv4(b: Uint8Array): Uint8Array | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT), ::a.b.c.d (compatible, deprecated)
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12);
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return b.slice(12);
  if (zeros(0, 12) && !(zeros(12, 15) && (b[15] === 0 || b[15] === 1))) return b.slice(12);
  // NAT64 well-known prefix 64:ff9b::/96 and local-use 64:ff9b:1::/48
  if (hasPrefix(b, [0x00, 0x64, 0xff, 0x9b], 32) && zeros(4, 12)) return b.slice(12);
  if (hasPrefix(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return b.slice(12);
  // 6to4 2002:AABB:CCDD::/48
  if (hasPrefix(b, [0x20, 0x02], 16)) return b.slice(2, 6);
  // Teredo 2001:0::/32: the client address is the last 32 bits, inverted
  if (hasPrefix(b, [0x20, 0x01, 0x00, 0x00], 32)) return b.slice(12).map((x) => x ^ 0xff);
  return undefined;
}

export function classifyIPv6(b: Uint8Array): AddressCategory {
  if (b.every((x) => x === 0)) return "unspecified";
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return "loopback";
  // AWS IMDS over IPv6
  if (
    hasPrefix(b, [0xfd, 0x00, 0x0e, 0xc2], 32) &&
    b.slice(4, 14).every((x) => x === 0) &&
    b[14] === 0x02 &&
    b[15] === 0x54
  ) {
    return "metadata";
  }
  const v4 = embeddedIPv4(b);
  if (v4 !== undefined) {
    const inner = classifyIPv4(v4);
    // A public IPv4 reached through a translation prefix is still a translation
    // prefix on our network; only mapped addresses are plain IPv4 to the kernel.
    return inner;
  }
  if (hasPrefix(b, [0xff], 8)) return "multicast";
  if (hasPrefix(b, [0xfe, 0x80], 10)) return "link_local";
  if (hasPrefix(b, [0xfe, 0xc0], 10)) return "private";
  if (hasPrefix(b, [0xfc], 7)) return "unique_local";
  if (hasPrefix(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0], 64)) return "reserved";
  if (hasPrefix(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "reserved";
  if (hasPrefix(b, [0x20, 0x01, 0x00], 23)) return "reserved";
  if (hasPrefix(b, [0x3f, 0xff], 20)) return "reserved";
  // Only global unicast 2000::/3 is public.
  if (!hasPrefix(b, [0x20], 3)) return "reserved";
  return "public";
}

export function classifyAddress(a: ParsedAddress): AddressCategory {
  return a.family === 4 ? classifyIPv4(a.bytes) : classifyIPv6(a.bytes);
}

export interface AddressPolicy {
  /** Let loopback through (tests, local tools). Every other non-public category stays blocked. */
  allowLoopback?: boolean;
}

export type AddressVerdict =
  | { ok: true; category: AddressCategory }
  | { ok: false; category: AddressCategory | "invalid" };

/** Is a literal address (any spelling) a permitted destination? */
export function checkAddress(text: string, policy: AddressPolicy = {}): AddressVerdict {
  const a = parseAddress(text);
  if (a === undefined) return { ok: false, category: "invalid" };
  const category = classifyAddress(a);
  if (category === "public") return { ok: true, category };
  if (category === "loopback" && policy.allowLoopback === true) return { ok: true, category };
  return { ok: false, category };
}

/** The canonical text of an address (dotted quad or RFC 5952-ish IPv6). */
export function formatAddress(a: ParsedAddress): string {
  if (a.family === 4) return Array.from(a.bytes).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2)
    groups.push((((a.bytes[i] as number) << 8) | (a.bytes[i + 1] as number)).toString(16));
  return groups.join(":");
}
