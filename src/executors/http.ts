// The HTTP executor. SSRF is stopped at the connection, not the URL: every hop's
// host is resolved once through an injectable resolver, every answer is
// classified (any blocked answer refuses the hop), and the socket connects to
// the pinned, checked address through a custom `lookup`, so a rebinding DNS
// server gets no second chance between check and connect. The Host header and
// TLS SNI keep the original name. Redirects are followed by hand, bounded, and
// re-checked from scratch; credentials are dropped on cross-origin redirects.
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { ExecutorError } from "../contracts/index.js";
import { type Cidr, ipInCidr, parseCidr, parseIp } from "../tools/index.js";
import {
  type AddressCategory,
  checkAddress,
  classifyAddress,
  formatAddress,
  parseAddress,
} from "./address.js";
import type { Invocation } from "./evidence.js";
import { rawOutputHash } from "./evidence.js";
import {
  type AttemptContext,
  type AttemptOutcome,
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  type ExecutorErrorCode,
  runBound,
  type ToolIdentity,
} from "./runtime.js";
import { SecretMasker } from "./secret-mask.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
/** Name resolution, injectable for tests and for deployments with their own resolver. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** The request a contract's HTTP template produced, secrets already substituted. */
export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Secret values substituted into the request: masked wherever they appear in evidence. */
  secrets?: readonly string[];
  /** Statuses that count as success (default: any 2xx). */
  successStatus?: readonly number[];
  /** Accepted response media types (`application/json`, `text/*`); default: any. */
  contentTypes?: readonly string[];
}

export interface HttpBinding extends ToolIdentity {
  /** Builds the request from the ticket's parameters (the contract's template). */
  build(
    parameters: Readonly<Record<string, unknown>>,
    ctx?: AttemptContext,
  ): HttpRequestSpec | Promise<HttpRequestSpec>;
  /** The contract's own host allow-list (scope.allowed_hosts); empty or absent means no contract restriction. */
  allowedHosts?: readonly string[];
  deniedHosts?: readonly string[];
  /**
   * The contract's address scope (scope.allowed_cidrs / denied_cidrs). When allowed CIDRs
   * are given, every resolved address of every hop must lie in one of them (in addition to
   * any host allow-list); an address in a denied CIDR is always refused.
   */
  allowedCidrs?: readonly string[];
  deniedCidrs?: readonly string[];
}

export interface HttpExecutorOptions {
  resolver?: Resolver;
  /** Explicit opt-in for loopback destinations (tests, local tools). Private ranges stay blocked. */
  allowLoopback?: boolean;
  /** Deployment scope: when non-empty, every hop's host must match one of these too. */
  allowedHosts?: readonly string[];
  deniedHosts?: readonly string[];
  /** Schemes a request or redirect may use (default https and http). */
  schemes?: readonly ("http" | "https")[];
  maxRedirects?: number;
  maxResponseBytes?: number;
  maxTimeoutMs?: number;
  /** Extra header names whose values never reach evidence. */
  sensitiveHeaders?: readonly string[];
}

export interface HttpOutput {
  status: number;
  /** The final URL (masked) after redirects. */
  url: string;
  contentType: string | null;
  headers: Record<string, string>;
  body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ALWAYS_SENSITIVE = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"];
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];
const SENSITIVE_QUERY = /(token|key|secret|password|passwd|sig|signature|auth|credential|session)/i;

/** `example.com` matches itself; `*.example.com` matches its subdomains only. */
export function hostMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  const p = pattern.toLowerCase().replace(/\.$/, "");
  if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return h === p;
}

function fail(code: ExecutorErrorCode, message: string): never {
  throw new ExecutorError(code, message);
}

type HopTarget = { address: string; family: 4 | 6; category: AddressCategory };
type Hop = { url: string; address: string | null; status: number | null };
type HopRequest = { method: string; headers: Record<string, string>; body: string | Uint8Array | undefined };

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export class HttpExecutor {
  readonly #resolver: Resolver;
  readonly #allowLoopback: boolean;
  readonly #allowedHosts: readonly string[];
  readonly #deniedHosts: readonly string[];
  readonly #schemes: ReadonlySet<string>;
  readonly #maxRedirects: number;
  readonly #maxBytes: number;
  readonly #maxTimeoutMs: number;
  readonly #sensitive: ReadonlySet<string>;
  readonly #deps: ExecutorDeps;

  constructor(options: HttpExecutorOptions = {}, deps: ExecutorDeps = {}) {
    this.#resolver = options.resolver ?? systemResolver;
    this.#allowLoopback = options.allowLoopback === true;
    this.#allowedHosts = options.allowedHosts ?? [];
    this.#deniedHosts = options.deniedHosts ?? [];
    this.#schemes = new Set((options.schemes ?? ["https", "http"]).map((s) => `${s}:`));
    this.#maxRedirects = options.maxRedirects ?? 5;
    this.#maxBytes = options.maxResponseBytes ?? 1024 * 1024;
    this.#maxTimeoutMs = options.maxTimeoutMs ?? 30_000;
    if (!Number.isInteger(this.#maxRedirects) || this.#maxRedirects < 0 || this.#maxRedirects > 20) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "maxRedirects must be an integer in 0..20");
    }
    if (!Number.isInteger(this.#maxBytes) || this.#maxBytes < 1) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "maxResponseBytes must be a positive integer");
    }
    this.#sensitive = new Set([
      ...ALWAYS_SENSITIVE,
      ...(options.sensitiveHeaders ?? []).map((h) => h.toLowerCase()),
    ]);
    this.#deps = deps;
  }

  execute(
    ticket: unknown,
    binding: HttpBinding,
    opts: CallOptions = {},
  ): Promise<ExecutionResult<HttpOutput>> {
    return runBound(
      ticket,
      {
        executor: "http",
        binding,
        defaultTaint: "web",
        maxTimeoutMs: this.#maxTimeoutMs,
        attempt: (spec, { signal }) => this.#guarded(spec, binding, signal),
      },
      this.#deps,
      opts,
    );
  }

  /** Every guard that applies to a hop's host, before any packet is sent. */
  async #checkHop(url: URL, binding: HttpBinding): Promise<HopTarget> {
    if (!this.#schemes.has(url.protocol))
      fail("ERR_EXEC_URL_INVALID", `scheme ${url.protocol} is not allowed`);
    if (url.username !== "" || url.password !== "") {
      fail("ERR_EXEC_URL_INVALID", "credentials in the URL are not allowed");
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (host === "") fail("ERR_EXEC_URL_INVALID", "URL has no host");
    const lists: [readonly string[], string][] = [
      [binding.allowedHosts ?? [], "contract"],
      [this.#allowedHosts, "deployment"],
    ];
    for (const [list, who] of lists) {
      if (list.length > 0 && !list.some((p) => hostMatches(host, p))) {
        fail("ERR_EXEC_HOST_NOT_ALLOWED", `host ${host} is not in the ${who} allow-list`);
      }
    }
    for (const p of [...(binding.deniedHosts ?? []), ...this.#deniedHosts]) {
      if (hostMatches(host, p)) fail("ERR_EXEC_HOST_NOT_ALLOWED", `host ${host} is denied`);
    }
    const literal = parseAddress(host);
    let answers: ResolvedAddress[];
    if (literal !== undefined) {
      answers = [{ address: formatAddress(literal), family: literal.family }];
    } else {
      try {
        answers = await this.#resolver(host.replace(/\.$/, ""));
      } catch (err) {
        fail("ERR_EXEC_DNS", `cannot resolve ${host}: ${(err as Error).message}`);
      }
      if (answers.length === 0) fail("ERR_EXEC_DNS", `no addresses for ${host}`);
    }
    // Every answer must pass: a mixed answer is the classic rebinding setup.
    const allowedCidrs = cidrList(binding.allowedCidrs);
    const deniedCidrs = cidrList(binding.deniedCidrs);
    let pinned: HopTarget | undefined;
    for (const a of answers) {
      const v = checkAddress(a.address, { allowLoopback: this.#allowLoopback });
      if (!v.ok) fail("ERR_EXEC_SSRF_BLOCKED", `${host} resolves to a ${v.category} address`);
      const ip = parseIp(a.address);
      if (ip !== undefined && deniedCidrs.some((c) => ipInCidr(ip, c))) {
        fail("ERR_EXEC_HOST_NOT_ALLOWED", `${host} resolves to an address the contract denies`);
      }
      if (allowedCidrs.length > 0 && (ip === undefined || !allowedCidrs.some((c) => ipInCidr(ip, c)))) {
        fail("ERR_EXEC_HOST_NOT_ALLOWED", `${host} resolves outside the contract's allowed CIDRs`);
      }
      const parsed = parseAddress(a.address);
      if (parsed === undefined) fail("ERR_EXEC_SSRF_BLOCKED", `${host} resolves to an unparseable address`);
      pinned ??= { address: formatAddress(parsed), family: parsed.family, category: classifyAddress(parsed) };
    }
    return pinned as HopTarget;
  }

  #maskUrl(url: URL, masker: SecretMasker): string {
    const u = new URL(url.href);
    if (u.password !== "") u.password = "***";
    // Pieces are checked as written and decoded: the URL parser's percent-encoding is not
    // encodeURIComponent's, and a raw `+` must not be read as a space here.
    if (u.search !== "") {
      u.search = u.search
        .slice(1)
        .split("&")
        .map((piece) => {
          const eq = piece.indexOf("=");
          const k = eq < 0 ? piece : piece.slice(0, eq);
          const hit = masker.contains(piece) || masker.contains(decodeURIComponentSafe(piece));
          return SENSITIVE_QUERY.test(decodeURIComponentSafe(k)) || hit ? `${hit ? "***" : k}=***` : piece;
        })
        .join("&");
    }
    if (!masker.empty) {
      u.pathname = u.pathname
        .split("/")
        .map((seg) => (masker.contains(decodeURIComponentSafe(seg)) ? "***" : seg))
        .join("/");
    }
    return masker.text(u.href);
  }

  #maskHeaders(headers: Record<string, string>, masker: SecretMasker): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      out[k] = this.#sensitive.has(k.toLowerCase()) ? "***" : masker.text(v);
    }
    return out;
  }

  /** #run, with every error message masked: a server can put a secret into what we report. */
  async #guarded(
    spec: HttpRequestSpec,
    binding: HttpBinding,
    signal: AbortSignal,
  ): Promise<AttemptOutcome<HttpOutput>> {
    const masker = new SecretMasker(spec.secrets ?? []);
    const out = await this.#run(spec, binding, signal, masker);
    if (out.error === undefined) return out;
    return { ...out, error: { code: out.error.code, message: masker.text(out.error.message) } };
  }

  async #run(
    spec: HttpRequestSpec,
    binding: HttpBinding,
    signal: AbortSignal,
    masker: SecretMasker,
  ): Promise<AttemptOutcome<HttpOutput>> {
    let url: URL;
    try {
      url = new URL(spec.url);
    } catch {
      return { invocation: null, error: { code: "ERR_EXEC_URL_INVALID", message: "not an absolute URL" } };
    }
    let req: HopRequest = {
      method: spec.method.toUpperCase(),
      body: spec.body,
      headers: { ...(spec.headers ?? {}) },
    };
    const hops: Hop[] = [];
    const rawBody = spec.body === undefined ? undefined : Buffer.from(spec.body);
    const invocation = (): Invocation => ({
      kind: "http",
      method: spec.method.toUpperCase(),
      url: this.#maskUrl(new URL(spec.url), masker),
      headers: this.#maskHeaders(spec.headers ?? {}, masker),
      // Of the masked body: a hash of the real one would let anyone confirm a guessed secret.
      body_hash: rawBody === undefined ? null : rawOutputHash(masker.bytes(rawBody).bytes),
      hops,
    });
    // Every request sent (redirect hops included) and the body bytes sent and received.
    const usage = { networkRequests: 0, networkBytes: 0 };
    const failed = (code: ExecutorErrorCode, message: string): AttemptOutcome<HttpOutput> => ({
      invocation: invocation(),
      error: { code, message },
      usage,
    });

    for (let redirects = 0; ; redirects++) {
      const hop: Hop = { url: this.#maskUrl(url, masker), address: null, status: null };
      hops.push(hop);
      let target: HopTarget;
      try {
        target = await this.#checkHop(url, binding);
      } catch (err) {
        if (err instanceof ExecutorError) return failed(err.code as ExecutorErrorCode, err.message);
        throw err;
      }
      hop.address = target.address;
      if (signal.aborted) return failed(abortCode(signal), "request aborted");
      usage.networkRequests++;
      usage.networkBytes += req.body === undefined ? 0 : Buffer.byteLength(req.body);
      const res = await this.#send(url, target, req, signal);
      if ("error" in res) return failed(res.error.code, res.error.message);
      usage.networkBytes += res.body.byteLength;
      hop.status = res.status;
      const location = res.headers.location;
      if (REDIRECTS.has(res.status) && location !== undefined) {
        if (redirects >= this.#maxRedirects) {
          return failed("ERR_EXEC_REDIRECT_LIMIT", `more than ${this.#maxRedirects} redirects`);
        }
        const next = this.#redirect(url, location, res.status, req, masker);
        if ("error" in next) return failed(next.error.code, next.error.message);
        url = next.url;
        req = next.req;
        continue;
      }
      return { ...this.#finish(spec, url, res, masker, invocation()), usage };
    }
  }

  /**
   * The next hop's request. Like fetch: 303 (and 301/302 after POST) become GET without
   * a body; on a cross-origin hop, credential and sensitive headers and any header that
   * carries a secret are dropped, and for good. A secret the new origin would still get
   * (in a body the method keeps, or in the new URL itself) stops the redirect:
   * ERR_EXEC_REDIRECT_BLOCKED, nothing is sent.
   */
  #redirect(
    from: URL,
    location: string,
    status: number,
    req: HopRequest,
    masker: SecretMasker,
  ): { url: URL; req: HopRequest } | { error: { code: ExecutorErrorCode; message: string } } {
    let next: URL;
    try {
      next = new URL(location, from);
    } catch {
      return { error: { code: "ERR_EXEC_URL_INVALID", message: "bad redirect target" } };
    }
    let { method, body, headers } = req;
    if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
      method = method === "HEAD" ? "HEAD" : "GET";
      body = undefined;
      headers = Object.fromEntries(
        Object.entries(headers).filter(
          ([k]) => !["content-type", "content-length"].includes(k.toLowerCase()),
        ),
      );
    }
    if (next.origin !== from.origin) {
      if (body !== undefined && masker.contains(typeof body === "string" ? Buffer.from(body) : body)) {
        return {
          error: {
            code: "ERR_EXEC_REDIRECT_BLOCKED",
            message: "a cross-origin redirect would re-send a secret body",
          },
        };
      }
      if (masker.contains(next.href) || masker.contains(decodeURIComponentSafe(next.href))) {
        return {
          error: {
            code: "ERR_EXEC_REDIRECT_BLOCKED",
            message: "a cross-origin redirect URL carries a secret",
          },
        };
      }
      // Credentials were meant for the origin the contract named, not wherever it points us.
      headers = Object.fromEntries(
        Object.entries(headers).filter(
          ([k, v]) =>
            !CREDENTIAL_HEADERS.includes(k.toLowerCase()) &&
            !this.#sensitive.has(k.toLowerCase()) &&
            !masker.contains(v),
        ),
      );
    }
    return { url: next, req: { method, body, headers } };
  }

  /** The final response, masked: the agent, the evidence and the hash all see the same bytes. */
  #finish(
    spec: HttpRequestSpec,
    url: URL,
    res: { status: number; headers: Record<string, string>; body: Buffer },
    masker: SecretMasker,
    invocation: Invocation,
  ): AttemptOutcome<HttpOutput> {
    const { bytes: body, count } = masker.bytes(res.body);
    const rawType = res.headers["content-type"];
    const contentType = rawType === undefined ? null : masker.text(rawType);
    const output: HttpOutput = {
      status: res.status,
      url: this.#maskUrl(url, masker),
      contentType,
      headers: this.#maskHeaders(res.headers, masker),
      body,
    };
    const base: AttemptOutcome<HttpOutput> = {
      invocation,
      raw: body,
      output,
      exit: { httpStatus: res.status },
      origin: url.host,
      ...(count > 0 ? { masked: count } : {}),
      ...(contentType !== null ? { contentType: contentType.split(";")[0]?.trim() ?? contentType } : {}),
    };
    if (spec.contentTypes !== undefined && !this.#typeAccepted(contentType, spec.contentTypes)) {
      return {
        ...base,
        error: {
          code: "ERR_EXEC_CONTENT_TYPE",
          message: `unexpected content type ${contentType ?? "(none)"}`,
        },
      };
    }
    const ok = spec.successStatus?.includes(res.status) ?? (res.status >= 200 && res.status < 300);
    if (!ok)
      return { ...base, error: { code: "ERR_EXEC_TOOL_FAILED", message: `HTTP status ${res.status}` } };
    return base;
  }

  #typeAccepted(contentType: string | null, accepted: readonly string[]): boolean {
    if (contentType === null) return false;
    const media = (contentType.split(";")[0] ?? "").trim().toLowerCase();
    return accepted.some((a) => {
      const p = a.toLowerCase();
      return p.endsWith("/*") ? media.startsWith(p.slice(0, -1)) : media === p;
    });
  }

  #send(
    url: URL,
    target: HopTarget,
    { method, headers, body }: HopRequest,
    signal: AbortSignal,
  ): Promise<
    | { status: number; headers: Record<string, string>; body: Buffer }
    | { error: { code: ExecutorErrorCode; message: string } }
  > {
    // The only answer the socket ever gets is the address we checked.
    const pinnedLookup = ((_host: string, options: { all?: boolean }, cb: (...a: unknown[]) => void) => {
      if (options?.all) cb(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    }) as unknown as LookupFunction;
    const mod = url.protocol === "https:" ? https : http;
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const isName = parseAddress(hostname) === undefined;
    return new Promise((resolve) => {
      let settled = false;
      const done = (v: Parameters<typeof resolve>[0]) => {
        if (!settled) {
          settled = true;
          resolve(v);
        }
      };
      const req = mod.request(
        {
          protocol: url.protocol,
          host: isName ? hostname : target.address,
          family: target.family,
          port: url.port === "" ? undefined : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method,
          headers: { ...headers, host: url.host },
          lookup: pinnedLookup,
          agent: false,
          signal,
          ...(url.protocol === "https:" && isName ? { servername: hostname } : {}),
        },
        (res) => {
          const declared = Number(res.headers["content-length"]);
          if (Number.isFinite(declared) && declared > this.#maxBytes) {
            done({
              error: { code: "ERR_EXEC_OUTPUT_TOO_LARGE", message: `response over ${this.#maxBytes} bytes` },
            });
            res.destroy();
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (c: Buffer) => {
            size += c.length;
            if (size > this.#maxBytes) {
              done({
                error: {
                  code: "ERR_EXEC_OUTPUT_TOO_LARGE",
                  message: `response over ${this.#maxBytes} bytes`,
                },
              });
              res.destroy();
              return;
            }
            chunks.push(c);
          });
          res.on("end", () => {
            const hs: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) {
              if (v !== undefined) hs[k] = Array.isArray(v) ? v.join(", ") : v;
            }
            done({ status: res.statusCode ?? 0, headers: hs, body: Buffer.concat(chunks) });
          });
          res.on("error", (err) => done(this.#netError(err, signal)));
          res.on("aborted", () => done(this.#netError(new Error("response aborted"), signal)));
        },
      );
      req.on("error", (err) => done(this.#netError(err, signal)));
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  #netError(err: Error, signal: AbortSignal): { error: { code: ExecutorErrorCode; message: string } } {
    if (signal.aborted) return { error: { code: abortCode(signal), message: "request aborted" } };
    return { error: { code: "ERR_EXEC_IO", message: err.message } };
  }
}

/** Parses a contract's CIDR list (validated when the contract loaded); a bare address is a /32 or /128. */
function cidrList(list: readonly string[] | undefined): Cidr[] {
  const out: Cidr[] = [];
  for (const e of list ?? []) {
    const c = parseCidr(e) ?? parseCidr(e.includes(":") ? `${e}/128` : `${e}/32`);
    if (c === undefined) fail("ERR_EXEC_HOST_NOT_ALLOWED", "the contract's CIDR scope is malformed");
    out.push(c);
  }
  return out;
}
