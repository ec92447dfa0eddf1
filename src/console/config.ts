// The `console:` section of sidecar.yaml (docs/console.md). Off unless `enabled: true`;
// `warden init` writes it on. Every bound has a ceiling so a typo cannot make the
// session table, the sign-in limiter or the browser key store unbounded.
import { z } from "zod";

export const ConsoleConfigSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** A session unused this long is ended (the next request must sign in again). */
  idleTimeoutSeconds: z.number().int().min(30).max(86_400).default(900),
  /** A session ends this long after its sign-in, used or not. */
  maxSessionSeconds: z
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(8 * 3600),
  /** Browser key registration needs a sign-in at most this old. */
  freshSignInSeconds: z.number().int().min(10).max(3600).default(300),
  /** Sessions held at once; past it the least recently used one is ended. */
  maxSessions: z.number().int().min(1).max(10_000).default(256),
  /** Sign-in attempts per minute per client address and per account, with backoff (sign-in-limits.ts). */
  signInPerMinute: z.number().int().min(1).max(600).default(10),
  /** Browser keys one approver may register (and 64x that in the whole store). */
  maxKeysPerApprover: z.number().int().min(1).max(16).default(4),
  /** Live queue connections (server-sent events) at once. */
  maxStreams: z.number().int().min(1).max(1024).default(64),
});
export type ConsoleConfig = z.infer<typeof ConsoleConfigSchema>;

export const CONSOLE_DEFAULTS: ConsoleConfig = ConsoleConfigSchema.parse({});
