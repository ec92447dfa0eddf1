// Network address grammar and deployment scope, written strictly: dotted-quad IPv4 only
// (no octal, hex or short forms that resolvers read differently), RFC 4291 IPv6 text
// without zone ids, ASCII LDH hostnames without punycode labels (IDN homoglyphs), and
// CIDR containment on integers. IPv4-mapped IPv6 addresses are checked as IPv4 so
// `::ffff:10.0.0.1` cannot step around an IPv4 scope rule.

export interface IpAddress {
  version: 4 | 6;
  /** The address as an unsigned integer (32 or 128 bits). */
  value: bigint;
}

export interface Cidr {
  version: 4 | 6;
  /** The network address (host bits cleared). */
  network: bigint;
  prefix: number;
}

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function parseIpv4(text: string): bigint | undefined {
  if (!IPV4_RE.test(text)) return undefined;
  let v = 0n;
  for (const octet of text.split(".")) v = (v << 8n) | BigInt(Number(octet));
  return v;
}

export function parseIpv6(text: string): bigint | undefined {
  if (text.length < 2 || text.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  let head = text;
  let v4: bigint | undefined;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string): string[] | undefined => {
    if (part === "") return [];
    const groups = part.split(":");
    return groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g)) ? groups : undefined;
  };
  const left = parse(halves[0] ?? "");
  const right = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if (left === undefined || right === undefined) return undefined;
  let groups: string[];
  if (halves.length === 2) {
    const missing = 8 - left.length - right.length;
    if (missing < 1) return undefined;
    groups = [...left, ...Array<string>(missing).fill("0"), ...right];
  } else {
    groups = left;
  }
  if (groups.length !== 8) return undefined;
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(Number.parseInt(g, 16));
  if (v4 !== undefined) v = (v & ~0xffffffffn) | v4;
  return v;
}

export function parseIp(text: string): IpAddress | undefined {
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return { version: 4, value: v4 };
  const v6 = parseIpv6(text);
  if (v6 !== undefined) return { version: 6, value: v6 };
  return undefined;
}

const bits = (version: 4 | 6) => (version === 4 ? 32 : 128);

function mask(version: 4 | 6, prefix: number): bigint {
  const width = BigInt(bits(version));
  const all = (1n << width) - 1n;
  return prefix === 0 ? 0n : (all >> (width - BigInt(prefix))) << (width - BigInt(prefix));
}

/** Parses `addr/prefix`; host bits may be set (nmap accepts them) and are cleared. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0 || text.indexOf("/", slash + 1) >= 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (ip === undefined || !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > bits(ip.version)) return undefined;
  return { version: ip.version, network: ip.value & mask(ip.version, prefix), prefix };
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address it maps. */
function unmap(ip: IpAddress): IpAddress {
  if (ip.version === 6 && ip.value >> 32n === 0xffffn) return { version: 4, value: ip.value & 0xffffffffn };
  return ip;
}

function unmapCidr(c: Cidr): Cidr {
  if (c.version === 6 && c.prefix >= 96 && c.network >> 32n === 0xffffn) {
    return { version: 4, network: c.network & 0xffffffffn, prefix: c.prefix - 96 };
  }
  return c;
}

export function ipInCidr(ip: IpAddress, cidr: Cidr): boolean {
  const a = unmap(ip);
  const c = unmapCidr(cidr);
  return a.version === c.version && (a.value & mask(c.version, c.prefix)) === c.network;
}

/** True when every address of `inner` lies in `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  const i = unmapCidr(inner);
  const o = unmapCidr(outer);
  return (
    i.version === o.version && i.prefix >= o.prefix && (i.network & mask(o.version, o.prefix)) === o.network
  );
}

/** Two CIDR blocks overlap exactly when one contains the other. */
export function cidrOverlaps(a: Cidr, b: Cidr): boolean {
  return cidrWithin(a, b) || cidrWithin(b, a);
}

const LABEL_RE = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

export type HostnameProblem = "syntax" | "non-ascii" | "punycode" | "numeric";

/** ASCII LDH hostname check; returns the problem, or undefined when valid. */
export function hostnameProblem(host: string): HostnameProblem | undefined {
  if (/[^\x21-\x7e]/.test(host)) return "non-ascii";
  if (host.length === 0 || host.length > 253) return "syntax";
  const labels = host.split(".");
  if (!labels.every((l) => LABEL_RE.test(l))) return "syntax";
  if (labels.some((l) => l.toLowerCase().startsWith("xn--"))) return "punycode";
  // An all-numeric last label is a malformed IP address, not a name (10.0.1.999).
  if (/^\d+$/.test(labels[labels.length - 1] ?? "")) return "numeric";
  return undefined;
}

/** `*.example.com` matches any proper subdomain (not the apex); otherwise exact, case-insensitive. */
export function matchHostPattern(host: string, pattern: string): boolean {
  const h = host.toLowerCase();
  const p = pattern.toLowerCase();
  if (p.startsWith("*.")) {
    const suffix = p.slice(1);
    return h.length > suffix.length && h.endsWith(suffix);
  }
  return h === p;
}

export type ScopeTarget =
  | { kind: "ip"; ip: IpAddress }
  | { kind: "cidr"; cidr: Cidr }
  | { kind: "host"; host: string };

export interface CompiledScope {
  allowedCidrs: Cidr[];
  allowedHosts: string[];
  deniedCidrs: Cidr[];
  deniedHosts: string[];
}

export interface ScopeInput {
  allowed_cidrs?: readonly string[];
  allowed_hosts?: readonly string[];
  denied_cidrs?: readonly string[];
  denied_hosts?: readonly string[];
}

/** Compiles a scope; returns the first malformed entry instead when there is one. */
export function compileScope(
  input: ScopeInput,
): { ok: true; scope: CompiledScope } | { ok: false; entry: string } {
  const cidrs = (list: readonly string[] | undefined): Cidr[] | string => {
    const out: Cidr[] = [];
    for (const e of list ?? []) {
      const c = parseCidr(e) ?? singleHost(e);
      if (c === undefined) return e;
      out.push(c);
    }
    return out;
  };
  const hosts = (list: readonly string[] | undefined): string[] | string => {
    for (const e of list ?? []) {
      const bare = e.startsWith("*.") ? e.slice(2) : e;
      if (hostnameProblem(bare) !== undefined) return e;
    }
    return [...(list ?? [])];
  };
  const allowedCidrs = cidrs(input.allowed_cidrs);
  if (typeof allowedCidrs === "string") return { ok: false, entry: allowedCidrs };
  const deniedCidrs = cidrs(input.denied_cidrs);
  if (typeof deniedCidrs === "string") return { ok: false, entry: deniedCidrs };
  const allowedHosts = hosts(input.allowed_hosts);
  if (typeof allowedHosts === "string") return { ok: false, entry: allowedHosts };
  const deniedHosts = hosts(input.denied_hosts);
  if (typeof deniedHosts === "string") return { ok: false, entry: deniedHosts };
  return { ok: true, scope: { allowedCidrs, allowedHosts, deniedCidrs, deniedHosts } };
}

function singleHost(text: string): Cidr | undefined {
  const ip = parseIp(text);
  return ip === undefined ? undefined : { version: ip.version, network: ip.value, prefix: bits(ip.version) };
}

/** Whether a target lies inside the scope: allowed by some entry and denied by none. */
export function inScope(target: ScopeTarget, scope: CompiledScope): boolean {
  switch (target.kind) {
    case "ip":
      return (
        scope.allowedCidrs.some((c) => ipInCidr(target.ip, c)) &&
        !scope.deniedCidrs.some((c) => ipInCidr(target.ip, c))
      );
    case "cidr":
      return (
        scope.allowedCidrs.some((c) => cidrWithin(target.cidr, c)) &&
        !scope.deniedCidrs.some((c) => cidrOverlaps(target.cidr, c))
      );
    case "host":
      return (
        scope.allowedHosts.some((p) => matchHostPattern(target.host, p)) &&
        !scope.deniedHosts.some((p) => matchHostPattern(target.host, p))
      );
  }
}
