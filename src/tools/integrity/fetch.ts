// Fetching SchemaPin documents (discovery, revocation, bundles) by URL. A discovery
// document decides which key is trusted, so the fetch is deliberately narrow: https
// only (plain http solely for loopback hosts, and only when the caller opts in, which
// is what tests use), no redirects, a timeout over the whole exchange, and a byte cap
// enforced while streaming rather than after buffering.
import { IntegrityError, parseStrictJson } from "../../contracts/index.js";
import { attemptAsync, fail, type IntegrityResult } from "./result.js";

export const WELL_KNOWN_PATH = "/.well-known/schemapin.json";

export interface FetchDocumentOptions {
  /** Whole-exchange timeout in ms (default 5000). */
  timeoutMs?: number;
  /** Largest accepted body in bytes (default 256 KiB). */
  maxBytes?: number;
  /** Permit http:// for 127.0.0.0/8, ::1 and localhost (tests, local mirrors). */
  allowLoopbackHttp?: boolean;
  /** Injected fetch (default: global fetch). */
  fetch?: typeof fetch;
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Checks the scheme rule; returns the parsed URL or throws ERR_INTEGRITY_FETCH. */
export function checkDocumentUrl(url: string, allowLoopbackHttp = false): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    fail("ERR_INTEGRITY_FETCH", "not a valid URL");
  }
  if (u.username !== "" || u.password !== "")
    fail("ERR_INTEGRITY_FETCH", "URLs with credentials are refused");
  if (u.protocol === "https:") return u;
  if (u.protocol === "http:" && allowLoopbackHttp && isLoopback(u.hostname)) return u;
  fail(
    "ERR_INTEGRITY_FETCH",
    u.protocol === "http:"
      ? `refusing plain http for ${u.hostname}: use https`
      : `unsupported scheme ${u.protocol}`,
  );
}

/** `https://example.com` → `https://example.com/.well-known/schemapin.json`; other paths are kept. */
export function wellKnownUrl(url: string): string {
  const u = new URL(url);
  if (u.pathname === "" || u.pathname === "/") u.pathname = WELL_KNOWN_PATH;
  return u.toString();
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > maxBytes) fail("ERR_INTEGRITY_FETCH", `document larger than ${maxBytes} bytes`);
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      fail("ERR_INTEGRITY_FETCH", `document larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
}

/** Fetches a JSON document under the rules above; the value is parsed strictly (no duplicate keys). */
export async function fetchJsonDocument(
  url: string,
  options: FetchDocumentOptions = {},
): Promise<IntegrityResult<{ value: unknown; url: string }>> {
  return attemptAsync(async () => {
    const u = checkDocumentUrl(url, options.allowLoopbackHttp ?? false);
    const maxBytes = options.maxBytes ?? 256 * 1024;
    const doFetch = options.fetch ?? fetch;
    let text: string;
    try {
      const res = await doFetch(u, {
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
        headers: { accept: "application/json" },
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        fail(
          "ERR_INTEGRITY_FETCH",
          `${u.host} answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`,
        );
      }
      text = await readCapped(res, maxBytes);
    } catch (err) {
      if (err instanceof IntegrityError) throw err;
      const name = (err as Error).name;
      fail(
        "ERR_INTEGRITY_FETCH",
        name === "TimeoutError" ? `timed out fetching ${u.host}` : `cannot fetch from ${u.host}`,
        err,
      );
    }
    let value: unknown;
    try {
      value = parseStrictJson(text, { maxLength: maxBytes });
    } catch (err) {
      fail("ERR_INTEGRITY_FETCH", `${u.host} did not return valid JSON`, err);
    }
    return { value, url: u.toString() };
  });
}
