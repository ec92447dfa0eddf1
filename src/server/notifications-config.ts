// The sidecar's `notifications:` section (docs/console.md#approvals-anywhere): who is told of a
// step-up or a `notify` obligation, and the console's public URL the one-time approval links
// point at. A target's `url` and `secret` may be `env:NAME` (read at start, so an incoming
// webhook URL — itself a credential — and the HMAC key stay out of the file).
import { z } from "zod";
import { ServerError } from "../contracts/index.js";
import type { RuntimeNotificationsConfig } from "../runtime/index.js";

const EnvOr = z.string().min(1).max(4096);

export const NotificationsConfigSchema = z.strictObject({
  /** The console's public base URL, e.g. https://warden.example.com (links need it). */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  targets: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits and _ . - only"),
        kind: z.enum(["webhook", "slack"]),
        url: EnvOr,
        /** HMAC-SHA256 key of the x-warden-signature header (required for webhooks), or env:NAME. */
        secret: EnvOr.optional(),
        channels: z.array(z.string().min(1).max(64)).max(64).optional(),
      }),
    )
    .min(1)
    .max(16),
  attempts: z.number().int().min(1).max(10).optional(),
  backoffMs: z.number().int().min(10).max(600_000).optional(),
  timeoutMs: z.number().int().min(100).max(60_000).optional(),
  maxQueue: z.number().int().min(1).max(100_000).optional(),
});
export type NotificationsConfig = z.infer<typeof NotificationsConfigSchema>;

function resolve(where: string, v: string, env: NodeJS.ProcessEnv): string {
  const named = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(v);
  const value = named === null ? v : env[named[1] as string];
  if (value === undefined || value === "")
    throw new ServerError("ERR_SERVER_CONFIG_INVALID", `${where}: ${v} is not set`);
  return value;
}

/** The section as the runtime takes it, `env:NAME` values read now. */
export function notificationsRuntimeConfig(
  c: NotificationsConfig,
  env: NodeJS.ProcessEnv = process.env,
): RuntimeNotificationsConfig {
  const targets = c.targets.map((t, i) => {
    const url = resolve(`notifications.targets[${i}].url`, t.url, env);
    if (!/^https?:\/\//.test(url))
      throw new ServerError("ERR_SERVER_CONFIG_INVALID", `notifications.targets[${i}].url must be http(s)`);
    const secret =
      t.secret === undefined ? undefined : resolve(`notifications.targets[${i}].secret`, t.secret, env);
    if (t.kind === "webhook" && (secret === undefined || secret.length < 16))
      throw new ServerError(
        "ERR_SERVER_CONFIG_INVALID",
        `notifications.targets[${i}]: a webhook needs a secret of at least 16 characters`,
      );
    return {
      name: t.name,
      kind: t.kind,
      url,
      ...(secret !== undefined ? { secret } : {}),
      ...(t.channels !== undefined ? { channels: t.channels } : {}),
    };
  });
  return {
    targets,
    ...(c.publicUrl !== undefined ? { publicUrl: c.publicUrl } : {}),
    ...(c.attempts !== undefined ? { attempts: c.attempts } : {}),
    ...(c.backoffMs !== undefined ? { backoffMs: c.backoffMs } : {}),
    ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
    ...(c.maxQueue !== undefined ? { maxQueue: c.maxQueue } : {}),
  };
}
