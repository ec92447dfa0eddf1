// The egress destinations of contained calls into the journal. The proxy (contain-run.ts,
// outside the sandbox) appends one fsync'd JSON line per destination to
// `<hooksDir>/egress/<session key>-<call id>-<pid>.part` and renames it `.jsonl` when the
// call ends; at the next event of the session the engine journals each line as a
// `warden.hooks.egress` entry and removes the file. A `.part` whose runner died (killed
// before its rename) is taken too. Bounded: files, lines and bytes per drain.
import { readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { EgressRecord } from "./contain-proxy.js";

const MAX_FILES = 64;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_LINES = 1001;

/** A proxy record with the session and call it belongs to (the `warden.hooks.egress` body). */
export interface EgressEntry extends EgressRecord {
  session_id: string;
  call_id: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/** Finished (or orphaned) journal files of one session: [file, call id]. */
function sessionFiles(dir: string, sessionKey: string): [string, string][] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: [string, string][] = [];
  for (const n of names) {
    const m = /^([0-9a-f]+)-(.+)-(\d+)\.(jsonl|part)$/.exec(n);
    if (!m || m[1] !== sessionKey) continue;
    if (m[4] === "part" && alive(Number(m[3]))) continue;
    out.push([join(dir, n), m[2] ?? ""]);
    if (out.length >= MAX_FILES) break;
  }
  return out;
}

function entry(line: string, sessionId: string, callId: string): EgressEntry | undefined {
  try {
    const r = JSON.parse(line) as Record<string, unknown>;
    const s = (k: string, max = 256) => (typeof r[k] === "string" ? (r[k] as string).slice(0, max) : "");
    return {
      session_id: sessionId.slice(0, 256),
      call_id: callId.slice(0, 256),
      at: s("at", 64),
      host: s("host"),
      port: typeof r.port === "number" && Number.isInteger(r.port) ? r.port : 0,
      method: s("method", 16),
      allowed: r.allowed === true,
      reason: s("reason", 1024),
    };
  } catch {
    return undefined;
  }
}

/** Reads and removes the session's egress journals; the entries to journal, in order. */
export function drainEgress(dir: string, sessionKey: string, sessionId: string): EgressEntry[] {
  const out: EgressEntry[] = [];
  for (const [file, callId] of sessionFiles(dir, sessionKey)) {
    try {
      if (statSync(file).size <= MAX_FILE_BYTES) {
        const lines = readFileSync(file, "utf8").split("\n").slice(0, MAX_LINES);
        for (const l of lines) {
          const e = l.trim() === "" ? undefined : entry(l, sessionId, callId);
          if (e !== undefined) out.push(e);
        }
      }
      unlinkSync(file);
    } catch {
      // Gone already (another engine process drained it).
    }
  }
  return out;
}
