// The network port of the AgentPin resolver (src/identity OnlineResolver), wired here so
// identity never touches the network itself. A discovery document decides which key is
// trusted, so the fetch follows the HTTP executor's SSRF rules: https only, the host
// resolved once and every answer classified by the executors' `checkAddress` (private,
// link-local, metadata and — unless allowed — loopback answers refuse the fetch), the
// socket pinned to the checked address (no rebinding between check and connect), no
// redirects (§6.2), a whole-exchange timeout and a streamed byte cap; JSON is parsed
// strictly. `Cache-Control: max-age` is passed on for the resolver's cache.
import https from "node:https";
import type { LookupFunction } from "node:net";
import { parseStrictJson } from "../contracts/index.js";
import {
  checkAddress,
  formatAddress,
  parseAddress,
  type Resolver,
  systemResolver,
} from "../executors/index.js";
import type { FetchJson } from "../identity/index.js";

export interface AgentPinFetchOptions {
  resolver?: Resolver;
  /** Loopback answers are refused unless this is set (tests, a local mirror). */
  allowLoopback?: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** Extra CA certificates (tests with a self-signed loopback server). */
  ca?: string | Buffer;
}

type Fetched = Awaited<ReturnType<FetchJson>>;

function maxAgeOf(header: string | undefined): number | undefined {
  if (header === undefined || /no-store|no-cache/i.test(header)) return undefined;
  const m = /(?:^|,)\s*max-age=(\d{1,9})\s*(?:,|$)/i.exec(header);
  return m === null ? undefined : Number(m[1]);
}

async function pinnedAddress(
  host: string,
  o: AgentPinFetchOptions,
): Promise<{ address: string; family: 4 | 6 } | string> {
  const literal = parseAddress(host);
  let answers: { address: string; family: 4 | 6 }[];
  try {
    answers =
      literal !== undefined
        ? [{ address: formatAddress(literal), family: literal.family }]
        : await (o.resolver ?? systemResolver)(host);
  } catch {
    return `cannot resolve ${host}`;
  }
  if (answers.length === 0) return `no addresses for ${host}`;
  for (const a of answers) {
    const v = checkAddress(a.address, { allowLoopback: o.allowLoopback === true });
    if (!v.ok) return `${host} resolves to a ${v.category} address (SSRF rule)`;
  }
  return answers[0] as { address: string; family: 4 | 6 };
}

/** A FetchJson port for OnlineResolver under the SSRF rules above. */
export function agentPinFetcher(o: AgentPinFetchOptions = {}): FetchJson {
  const maxBytes = o.maxBytes ?? 256 * 1024;
  return async (url: string): Promise<Fetched> => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { ok: false, message: "not a URL" };
    }
    if (u.protocol !== "https:" || u.username !== "" || u.password !== "") {
      return { ok: false, message: "only https URLs without credentials are fetched" };
    }
    const target = await pinnedAddress(u.hostname.replace(/^\[|\]$/g, ""), o);
    if (typeof target === "string") return { ok: false, message: target };
    const lookup: LookupFunction = (_h, opts, cb) => {
      if ((opts as { all?: boolean }).all === true)
        cb(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    };
    return new Promise<Fetched>((resolve) => {
      const req = https.get(
        u,
        {
          lookup,
          timeout: o.timeoutMs ?? 5000,
          headers: { accept: "application/json" },
          ...(o.ca === undefined ? {} : { ca: o.ca }),
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            resolve({
              ok: false,
              message: `${u.host} answered HTTP ${res.statusCode} (redirects are not followed)`,
            });
            return;
          }
          const chunks: Buffer[] = [];
          let total = 0;
          res.on("data", (c: Buffer) => {
            total += c.length;
            if (total > maxBytes) {
              req.destroy();
              resolve({ ok: false, message: `document larger than ${maxBytes} bytes` });
            } else chunks.push(c);
          });
          res.on("end", () => {
            try {
              const text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
              const body = parseStrictJson(text, { maxLength: maxBytes });
              const age = maxAgeOf(res.headers["cache-control"]);
              resolve(age === undefined ? { ok: true, body } : { ok: true, body, maxAgeSeconds: age });
            } catch {
              resolve({ ok: false, message: `${u.host} did not return valid JSON` });
            }
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", () => resolve({ ok: false, message: `cannot fetch from ${u.host}` }));
    });
  };
}
