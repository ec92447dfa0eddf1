// Masking of known secret values. An executor that substituted a secret into a
// request knows its value, so it can make sure the value never travels further:
// not in the output the agent sees, not in the evidence, not in an error message,
// and not to an origin the contract did not name. Masking covers the spellings a
// server is likely to echo: the raw value, percent-encoding (both hex cases, and
// `+` for spaces), JSON string escaping, and base64 / base64url at every byte
// alignment (so `Basic base64("user:" + secret)` is caught inside a larger blob).
// It is a backstop, not a proof: a server that hex-encodes, reverses or compresses
// a secret defeats any substring search (docs/executors.md says so).

export const MASK = "***";

/** base64 text that depends only on the secret's bytes, for each of the three alignments. */
function base64Cores(bytes: Buffer, alphabet: "base64" | "base64url"): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const enc = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString(alphabet)
      .replace(/=+$/, "");
    // Characters whose 6 bits lie entirely inside the secret's bits.
    const core = enc.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    if (core.length >= 4) out.push(core);
  }
  return out;
}

/** Every spelling of one secret that is masked, longest first. */
export function secretForms(secret: string): string[] {
  if (secret.length === 0) return [];
  const bytes = Buffer.from(secret, "utf8");
  const pct = encodeURIComponent(secret);
  const forms = new Set<string>([
    secret,
    pct,
    pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    pct.replace(/%20/g, "+"),
    JSON.stringify(secret).slice(1, -1),
    ...base64Cores(bytes, "base64"),
    ...base64Cores(bytes, "base64url"),
  ]);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Masks a fixed set of secrets in text and bytes. */
export class SecretMasker {
  readonly #forms: string[];
  readonly #byteForms: Buffer[];

  constructor(secrets: readonly string[]) {
    const all = new Set<string>();
    for (const s of secrets) for (const f of secretForms(s)) all.add(f);
    this.#forms = [...all].sort((a, b) => b.length - a.length);
    this.#byteForms = this.#forms.map((f) => Buffer.from(f, "utf8"));
  }

  get empty(): boolean {
    return this.#forms.length === 0;
  }

  /** True when any spelling of any secret occurs in the value. */
  contains(value: string | Uint8Array): boolean {
    if (typeof value === "string") return this.#forms.some((f) => value.includes(f));
    const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return this.#byteForms.some((f) => buf.includes(f));
  }

  text(value: string): string {
    let out = value;
    for (const f of this.#forms) if (out.includes(f)) out = out.split(f).join(MASK);
    return out;
  }

  /** The bytes with every occurrence replaced by `***`, and how many were replaced. */
  bytes(value: Buffer): { bytes: Buffer; count: number } {
    let out = value;
    let count = 0;
    const mask = Buffer.from(MASK);
    for (const f of this.#byteForms) {
      let at = out.indexOf(f);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at >= 0) {
        parts.push(out.subarray(from, at), mask);
        count++;
        from = at + f.length;
        at = out.indexOf(f, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return { bytes: out, count };
  }
}
