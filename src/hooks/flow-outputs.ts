// The tool outputs of a host session, kept for flow control across hook processes
// (docs/hooks-sessions.md "Flow control"). A host that starts a process per hook has no
// Gate session that lives from a PostToolUse to the next PreToolUse, so each untrusted
// result is stored here, and a later sink call feeds the outputs that can matter into its
// Gate session's value provenance (flow-control.ts). Two files per session and epoch, in
// Warden's hooks state directory (0600; no file tool may read or write it, the sandbox
// masks it, a shell command naming it is denied):
//   <key>.e<epoch>.idx   one JSON line per output: its number, taint labels, the distinctive
//                        tokens it holds (provenance.ts extractTokens), where its text lies
//                        in the text file and the text's SHA-256, and an HMAC chained over
//                        the previous line's (key: the engine's ask key, domain-separated,
//                        bound to the session key) — a changed, reordered or forged line
//                        fails the chain.
//   <key>.e<epoch>.txt   the outputs' texts, appended; read only for the outputs a call's
//                        values can match, each checked against its digest.
// The session state (state.ts `flow`) holds the count and last MAC: a file that lost
// entries, or was removed or replaced, no longer ends where the state says (fail closed).
// Loading reads the small index, never the texts of outputs a call cannot match.
import { createHash, createHmac } from "node:crypto";
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { extractTokens } from "../context/index.js";
import { TaintLabel } from "../contracts/index.js";
import type { FlowHead } from "./state.js";

/** Characters of one output kept (a longer output is kept in part and marked overflowed). */
export const MAX_OUTPUT_CHARS = 256 * 1024;
/** Characters of all outputs of one session and epoch; beyond, outputs are kept as overflow marks. */
export const MAX_TEXT_CHARS = 4 * 1024 * 1024;
/** Tokens of all outputs of one session and epoch; beyond, outputs are kept as overflow marks. */
export const MAX_TOKENS = 256 * 1024;
/** Entries of one session and epoch; beyond, nothing more is stored and the head is failed. */
export const MAX_ENTRIES = 4096;
/** The shortest token kept: the index's own minimum (ProvenanceOptions.minToken ≥ 4), a superset of any. */
const MIN_TOKEN = 4;
const DOMAIN = "warden-hook-outputs\u0000";

export const FlowEntrySchema = z.strictObject({
  m: z.string().regex(/^[0-9a-f]{64}$/),
  n: z.number().int().min(1),
  l: z.array(TaintLabel).min(1).max(64),
  /** The output's tokens as 32-bit hashes (tokenHash), little-endian, base64. */
  k: z.string().max(Math.ceil((MAX_TOKENS * 4) / 3) + 4),
  /** Offset and length of the text in the text file (absent: an overflow mark without text). */
  at: z.number().int().nonnegative().optional(),
  len: z.number().int().nonnegative().optional(),
  h: z.string().max(64).optional(),
  /** The output was not kept whole (its text, its tokens or the store overflowed). */
  o: z.literal(1).optional(),
});
export type FlowEntry = z.infer<typeof FlowEntrySchema>;

/** Where one session's outputs live, and the key that seals them. */
export interface FlowStore {
  dir: string;
  /** The session key (contain.ts sessionKeyOf) and its epoch (state.ts). */
  name: string;
  key: Buffer;
}

/** A stored output as a sink call reads it. */
export interface StoredOutput {
  n: number;
  labels: TaintLabel[];
  /** The output's token hashes (tokenHash). */
  tokens: Uint32Array;
  overflowed: boolean;
  /** Reads and checks the text (undefined: no text was kept, or it no longer matches its digest). */
  text(): string | undefined;
}

export type Loaded =
  | { ok: true; outputs: StoredOutput[]; head: FlowHead | undefined }
  | { ok: false; why: string };

const paths = (s: FlowStore) => ({
  idx: join(s.dir, `${s.name}.idx`),
  txt: join(s.dir, `${s.name}.txt`),
});

function macOf(s: FlowStore, prev: string, body: string): string {
  return createHmac("sha256", s.key).update(`${DOMAIN}${s.name}\u0000${prev}\u0000${body}`).digest("hex");
}

/** A line is `{"m":"<MAC>",…}`: the MAC is over the rest of the line as written, never re-serialised. */
const MAC_HEAD = '{"m":"';
const BODY_AT = MAC_HEAD.length + 64 + 2;

/** The entries of the index, their chain checked; a broken or forged line is a failure. */
function readEntries(s: FlowStore): { ok: true; entries: FlowEntry[] } | { ok: false; why: string } {
  const p = paths(s).idx;
  if (!existsSync(p)) return { ok: true, entries: [] };
  const entries: FlowEntry[] = [];
  let prev = "";
  for (const line of readFileSync(p, "utf8").split("\n")) {
    if (line === "") continue;
    const where = `entry ${entries.length + 1}`;
    const body = `{${line.slice(BODY_AT)}`;
    const mac = line.slice(MAC_HEAD.length, MAC_HEAD.length + 64);
    if (!line.startsWith(MAC_HEAD) || macOf(s, prev, body) !== mac)
      return { ok: false, why: `${where} fails its seal` };
    let e: FlowEntry;
    try {
      // Sealed by this engine: plain JSON.parse (the MAC, checked first, vouches for the text).
      e = FlowEntrySchema.parse(JSON.parse(line));
    } catch {
      return { ok: false, why: `${where} is not a stored output` };
    }
    if (e.n !== entries.length + 1 || e.m !== mac) return { ok: false, why: `${where} is out of order` };
    entries.push(e);
    prev = mac;
  }
  return { ok: true, entries };
}

/** The entries, checked against the session's head: a store that lost or replaced entries fails. */
function checkedEntries(s: FlowStore, head: FlowHead | undefined) {
  const r = readEntries(s);
  if (!r.ok) return r;
  if (head === undefined || head.count === 0) return r;
  const at = r.entries[head.count - 1];
  if (at === undefined || at.m !== head.mac)
    return {
      ok: false as const,
      why: `the store does not hold the ${head.count} outputs the session recorded`,
    };
  return r;
}

function textReader(s: FlowStore, e: FlowEntry): () => string | undefined {
  return () => {
    if (e.at === undefined || e.len === undefined || e.h === undefined) return undefined;
    const buf = Buffer.alloc(e.len);
    let fd: number;
    try {
      fd = openSync(paths(s).txt, "r");
    } catch {
      return undefined; // removed: the caller counts the output as overflowed
    }
    try {
      if (readSync(fd, buf, 0, e.len, e.at) !== e.len) return undefined;
    } finally {
      closeSync(fd);
    }
    return createHash("sha256").update(buf).digest("hex") === e.h ? buf.toString("utf8") : undefined;
  };
}

/** The session's stored outputs, checked against its head (state.ts `flow`). */
export function loadOutputs(s: FlowStore, head: FlowHead | undefined): Loaded {
  let r: ReturnType<typeof checkedEntries>;
  try {
    r = checkedEntries(s, head);
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.message.slice(0, 256) : "unreadable" };
  }
  if (!r.ok) return r;
  const outputs = r.entries.map(
    (e): StoredOutput => ({
      n: e.n,
      labels: e.l,
      tokens: hashesOf(e.k),
      overflowed: e.o === 1,
      text: textReader(s, e),
    }),
  );
  const last = r.entries.at(-1);
  return { ok: true, outputs, head: last === undefined ? head : { count: last.n, mac: last.m } };
}

/** 32-bit FNV-1a of a compact token: the prefilter's key (a collision only feeds one output more). */
export function tokenHash(t: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < t.length; i++) {
    h ^= t.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The distinctive tokens of a text (provenance.ts extractTokens), compacted to letters and digits, hashed. */
export function tokensOf(text: string): Set<number> {
  const out = new Set<number>();
  for (const t of extractTokens(text, MIN_TOKEN)) out.add(tokenHash(t.text.replace(/[^\p{L}\p{N}]+/gu, "")));
  return out;
}

function packHashes(h: Set<number>): string {
  const a = Uint32Array.from(h);
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");
}

function hashesOf(b64: string): Uint32Array {
  const b = Buffer.from(b64, "base64");
  const copy = new Uint8Array(b.length - (b.length % 4));
  copy.set(b.subarray(0, copy.length));
  return new Uint32Array(copy.buffer);
}

/**
 * Appends one output (under the caller's lock) and returns the new head. The store is checked
 * against `head` first: appending to a store that lost entries would hide the loss.
 */
export function appendOutput(
  s: FlowStore,
  head: FlowHead | undefined,
  text: string,
  labels: TaintLabel[],
  truncated: boolean,
): FlowHead {
  const r = checkedEntries(s, head);
  if (!r.ok) throw new Error(r.why);
  if (r.entries.length >= MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} outputs`);
  const last = r.entries.at(-1);
  const kept = text.slice(0, MAX_OUTPUT_CHARS);
  const usedText = r.entries.reduce((n, e) => n + (e.len ?? 0), 0);
  const usedTokens = r.entries.reduce((n, e) => n + Math.floor((e.k.length * 3) / 16), 0);
  const tokens = tokensOf(kept);
  const fits = usedText + kept.length <= MAX_TEXT_CHARS && usedTokens + tokens.size <= MAX_TOKENS;
  const p = paths(s);
  let where: Pick<FlowEntry, "at" | "len" | "h"> = {};
  if (fits && kept.length > 0) {
    const bytes = Buffer.from(kept, "utf8");
    const fd = openSync(p.txt, "a", 0o600);
    try {
      const at = fstatSync(fd).size;
      writeSync(fd, bytes);
      where = { at, len: bytes.length, h: createHash("sha256").update(bytes).digest("hex") };
    } finally {
      closeSync(fd);
    }
  }
  const overflowed = !fits || truncated || text.length > MAX_OUTPUT_CHARS;
  const n = r.entries.length + 1;
  const body = JSON.stringify({
    n,
    l: labels.slice(0, 64),
    k: fits ? packHashes(tokens) : "",
    ...where,
    ...(overflowed ? { o: 1 as const } : {}),
  });
  const m = macOf(s, last?.m ?? "", body);
  const fd = openSync(p.idx, "a", 0o600);
  try {
    writeSync(fd, `${MAC_HEAD}${m}",${body.slice(1)}\n`);
  } finally {
    closeSync(fd);
  }
  return { count: n, mac: m };
}
