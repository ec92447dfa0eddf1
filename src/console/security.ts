// The console's own defences, in one place: the response headers every console answer
// carries (a strict CSP with no inline script, no framing, no sniffing, no referrer), the
// session cookie's flags, the form parser (urlencoded, bounded, duplicate keys refused),
// the same-origin check of a state change (the sign-in limits are in sign-in-limits.ts).
import { ConsoleError } from "../contracts/index.js";

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

export const SESSION_COOKIE = "warden_console";

export interface CookieOptions {
  readonly base: string;
  readonly tls: boolean;
  /** Seconds; 0 clears the cookie. */
  readonly maxAge: number;
}

/** The Set-Cookie value of the session cookie. */
export function sessionCookie(value: string, o: CookieOptions): string {
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    `Path=${o.base}`,
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${o.maxAge}`,
  ];
  if (o.tls) parts.push("Secure");
  return parts.join("; ");
}

/** The session cookie's value from a Cookie header (the first one wins; none: undefined). */
export function sessionIdFrom(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Longest form accepted (a modified parameter set included). */
export const MAX_FORM_BYTES = 4 * 1024 * 1024;
const MAX_FIELDS = 64;

/** Parses an urlencoded form: at most 64 fields, no repeated name, no prototype keys. */
export function parseForm(body: string): Record<string, string> {
  if (body.length > MAX_FORM_BYTES) throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "form too large");
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let n = 0;
  for (const [k, v] of new URLSearchParams(body)) {
    if (++n > MAX_FIELDS) throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "too many form fields");
    if (k === "__proto__" || k === "constructor" || k === "prototype")
      throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "forbidden form field name");
    if (Object.hasOwn(out, k))
      throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", `field ${k.slice(0, 64)} repeated`);
    out[k] = v;
  }
  return out;
}

/**
 * A state change must come from the console's own pages: when the browser says where the
 * request came from, it must be this origin. Fetch metadata (`Sec-Fetch-Site`) decides when
 * present; otherwise `Origin`, which must name this host (a browser sends `Origin: null` on
 * a form post under `Referrer-Policy: no-referrer`, so `null` alone is refused only when no
 * fetch metadata vouches for the request).
 */
export function sameOrigin(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const site = headers["sec-fetch-site"];
  if (typeof site === "string") return site === "same-origin" || site === "none";
  const origin = headers.origin;
  if (origin === undefined) return true;
  const host = headers.host;
  if (typeof origin !== "string" || typeof host !== "string") return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
