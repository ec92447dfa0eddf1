// Console sessions: server-side, bounded, random ids. The browser holds only the session
// id (an HttpOnly, SameSite=Strict cookie); the principal, its roles and the CSRF token
// live here. A session ends on sign-out, after `idleTimeoutSeconds` without a request,
// `maxSessionSeconds` after its sign-in, or when the table is full and it is the least
// recently used. Ids and CSRF tokens are compared through their SHA-256 digests with
// timingSafeEqual, so the time taken says nothing about how close a guess was.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ConsoleConfig } from "./config.js";
import type { ConsoleRole } from "./page.js";

export interface ConsoleSession {
  readonly id: string;
  readonly principalId: string;
  /** The console roles of the credential (approver, auditor). */
  readonly roles: readonly ConsoleRole[];
  /** Every role of the credential (the approval queue checks the policy's approver role). */
  readonly credentialRoles: readonly string[];
  readonly csrfToken: string;
  readonly signedInAt: number;
  lastSeen: number;
}

export type SessionLookup =
  | { readonly ok: true; readonly session: ConsoleSession }
  | { readonly ok: false; readonly reason: "missing" | "unknown" | "idle" | "expired" };

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Compares two secrets without an early exit on the first differing byte. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export class ConsoleSessions {
  /** Insertion order is use order: a used session is moved to the end. */
  readonly #table = new Map<string, ConsoleSession>();

  constructor(
    readonly config: Pick<ConsoleConfig, "idleTimeoutSeconds" | "maxSessionSeconds" | "maxSessions">,
    readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#table.size;
  }

  /** A new session for a verified credential; the oldest unused one goes when the table is full. */
  create(principalId: string, credentialRoles: readonly string[]): ConsoleSession {
    while (this.#table.size >= this.config.maxSessions) {
      const oldest = this.#table.keys().next().value;
      if (oldest === undefined) break;
      this.#table.delete(oldest);
    }
    const at = this.now();
    const s: ConsoleSession = {
      id: randomBytes(32).toString("base64url"),
      principalId,
      roles: consoleRoles(credentialRoles),
      credentialRoles: Object.freeze([...credentialRoles]),
      csrfToken: randomBytes(32).toString("base64url"),
      signedInAt: at,
      lastSeen: at,
    };
    this.#table.set(s.id, s);
    return s;
  }

  /** The live session for a cookie value; a lookup counts as use (the idle clock restarts). */
  touch(id: string | undefined): SessionLookup {
    if (id === undefined || id === "") return { ok: false, reason: "missing" };
    if (id.length > 128) return { ok: false, reason: "unknown" };
    const s = this.#table.get(id);
    if (s === undefined || !sameSecret(s.id, id)) return { ok: false, reason: "unknown" };
    const at = this.now();
    if (at - s.signedInAt > this.config.maxSessionSeconds * 1000) {
      this.#table.delete(id);
      return { ok: false, reason: "expired" };
    }
    if (at - s.lastSeen > this.config.idleTimeoutSeconds * 1000) {
      this.#table.delete(id);
      return { ok: false, reason: "idle" };
    }
    s.lastSeen = at;
    this.#table.delete(id);
    this.#table.set(id, s);
    return { ok: true, session: s };
  }

  /** Whether a session is still live, without counting as use (the live queue's check). */
  alive(id: string): boolean {
    const s = this.#table.get(id);
    if (s === undefined) return false;
    const at = this.now();
    return (
      at - s.signedInAt <= this.config.maxSessionSeconds * 1000 &&
      at - s.lastSeen <= this.config.idleTimeoutSeconds * 1000
    );
  }

  end(id: string): void {
    this.#table.delete(id);
  }
}

/** The console roles a credential carries: its `approver` and `auditor` roles. */
export function consoleRoles(credentialRoles: readonly string[]): ConsoleRole[] {
  const out: ConsoleRole[] = [];
  if (credentialRoles.includes("approver")) out.push("approver");
  if (credentialRoles.includes("auditor")) out.push("auditor");
  return out;
}
