// A host adapter asking the sidecar instead of an in-process engine (the AARTS remote
// transport, docs/hooks.md "Remote"): POST /v1/hooks/handshake, then POST /v1/hooks/events
// with the translated event, as the credential's host principal. Whatever goes wrong — no
// answer within the hook's timeout, a refused credential, a 4xx/5xx, a body that is not a
// verdict — the adapter renders the fail-closed verdict: the host blocks.
import { failureVerdict } from "./failure.js";
import { type HostAdapter, type HostAnswer, isObject } from "./host-adapter-common.js";
import { AARTS_VERSION, type Verdict, VerdictSchema } from "./schema-base.js";
import { SESSION_LEVEL_HOOKS } from "./schema-points.js";

export interface RemoteEngine {
  /** The sidecar's base URL (http or https). */
  url: string;
  /** An agent credential whose principal has the `host` role. */
  token: string;
  /** §9.1 timeouts: tool hooks 5 s, session-level hooks 10 s by default. */
  timeouts?: { toolMs?: number; sessionMs?: number };
}

const failed = (code: string, message: string): Verdict =>
  failureVerdict(undefined, undefined, { open: 0 }, code, message);

async function post(remote: RemoteEngine, path: string, body: unknown, signal: AbortSignal) {
  const res = await fetch(new URL(path, remote.url), {
    method: "POST",
    headers: { authorization: `Bearer ${remote.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
    redirect: "error",
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed };
}

function errorCode(body: unknown, status: number): string {
  const code = isObject(body) && isObject(body.error) ? body.error.code : undefined;
  return typeof code === "string" ? code.slice(0, 64) : `HTTP ${status}`;
}

async function remoteVerdict(remote: RemoteEngine, event: unknown, signal: AbortSignal): Promise<Verdict> {
  const hs = await post(remote, "/v1/hooks/handshake", { aarts_version: AARTS_VERSION }, signal);
  if (hs.status !== 200 || !isObject(hs.body) || hs.body.compatible !== true) {
    return failed(
      "ERR_HOOK_HANDSHAKE_REQUIRED",
      `the sidecar refused the handshake (${errorCode(hs.body, hs.status)})`,
    );
  }
  const r = await post(remote, "/v1/hooks/events", event, signal);
  if (r.status !== 200) {
    const code = errorCode(r.body, r.status);
    return failed(
      code.startsWith("ERR_HOOK_") ? code : "ERR_HOOK_ENGINE_FAULT",
      `the sidecar answered ${r.status} (${code})`,
    );
  }
  const v = VerdictSchema.safeParse(r.body);
  return v.success ? v.data : failed("ERR_HOOK_ENGINE_FAULT", "the sidecar's answer is not a verdict");
}

/** The remote counterpart of answerHostEvent: same translation and rendering, fail closed. */
export async function answerHostEventRemote(
  remote: RemoteEngine,
  adapter: HostAdapter,
  input: unknown,
  now: string,
): Promise<HostAnswer> {
  const event = isObject(input) ? adapter.translate(input, now) : input;
  const point = isObject(event) && typeof event.hook_point === "string" ? event.hook_point : "";
  const session = SESSION_LEVEL_HOOKS.has(point as never);
  const ms = session ? (remote.timeouts?.sessionMs ?? 10_000) : (remote.timeouts?.toolMs ?? 5_000);
  let verdict: Verdict;
  try {
    verdict = await remoteVerdict(remote, event, AbortSignal.timeout(ms));
  } catch (err) {
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    verdict = timeout
      ? failed("ERR_HOOK_TIMEOUT", `no verdict from the sidecar within ${ms} ms`)
      : failed(
          "ERR_HOOK_ENGINE_FAULT",
          `the sidecar could not be reached (${err instanceof Error ? err.message.slice(0, 200) : "error"})`,
        );
  }
  return adapter.render(adapter.eventName(input), verdict);
}
