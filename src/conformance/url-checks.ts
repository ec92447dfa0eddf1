// The checks that run against a sidecar over HTTP (docs/http-api.md): the agent token makes
// calls, the operator token reads the journal; journal integrity is checked here with the
// offline verifier on the entries the sidecar serves, under the public key it publishes.
import { createPublicKey } from "node:crypto";
import { Keyring } from "../crypto/index.js";
import { type JournalEntry, verifyJournal } from "../journal/index.js";
import { unknownTool } from "./scenario.js";
import type { Observation, UrlTarget } from "./types.js";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function api(
  t: UrlTarget,
  path: string,
  o: { token: string; body?: unknown; method?: string },
): Promise<Answer> {
  const res = await fetch(new URL(path, t.url.endsWith("/") ? t.url : `${t.url}/`), {
    method: o.method ?? (o.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${o.token}`,
      ...(o.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text: text.slice(0, 200) };
  }
  return { status: res.status, body };
}

const errCode = (a: Answer) =>
  String((a.body.error as { code?: string } | undefined)?.code ?? a.body.decision ?? a.status);

async function newRun(t: UrlTarget): Promise<string> {
  const r = await api(t, "v1/runs", { token: t.agentToken, body: {} });
  if (r.status !== 201 || typeof r.body.runId !== "string")
    throw new Error(`POST /v1/runs answered ${r.status} ${errCode(r)}`);
  return r.body.runId;
}

const skip = (why: string): Observation => ({ pass: false, observed: why, skipped: why });

/** An invented run id is refused before the Gate; an undeclared tool is denied and not executed. */
export async function unknownToolOverHttp(t: UrlTarget): Promise<Observation> {
  const invented = await api(t, "v1/execute", {
    token: t.agentToken,
    body: {
      runId: "run-invented-by-the-agent",
      tool: unknownTool(),
      toolClass: "conformance",
      action: "probe",
    },
  });
  const runId = await newRun(t);
  const call = await api(t, "v1/execute", {
    token: t.agentToken,
    body: { runId, tool: unknownTool(), toolClass: "conformance", action: "probe", parameters: {} },
  });
  // An action no contract declares and no rule names (decide only: nothing to execute).
  const bare = await api(t, "v1/decide", {
    token: t.agentToken,
    body: { runId, toolClass: "conformance", action: "undeclared", parameters: {} },
  });
  const executed = call.body.result !== undefined;
  const refused = (a: Answer) => a.status >= 400 || a.body.decision === "deny";
  return {
    pass: invented.status === 404 && refused(call) && !executed && refused(bare),
    observed: `invented run id → ${invented.status} ${errCode(invented)}; undeclared tool → ${call.status} ${errCode(call)}, executed: ${executed}; undeclared action → ${bare.status} ${errCode(bare)}`,
  };
}

async function journalPrefix(
  t: UrlTarget,
  token: string,
): Promise<{ entries: JournalEntry[]; keyring: Keyring }> {
  const head = await api(t, "v1/journal/head", { token });
  if (head.status !== 200) throw new Error(`GET /v1/journal/head answered ${head.status} ${errCode(head)}`);
  const key = createPublicKey({ key: head.body.publicKey as never, format: "jwk" });
  const list = await api(t, "v1/journal?order=asc&limit=1000", { token });
  if (list.status !== 200) throw new Error(`GET /v1/journal answered ${list.status} ${errCode(list)}`);
  return { entries: list.body.entries as JournalEntry[], keyring: new Keyring([key]) };
}

/** The sidecar's own verification passes; the served entries verify here and an altered copy does not. */
export async function journalVerifiesOverHttp(t: UrlTarget): Promise<Observation> {
  if (t.operatorToken === undefined)
    return skip("needs an operator token ($WARDEN_OPERATOR_TOKEN) to read the journal");
  const token = t.operatorToken;
  await unknownToolOverHttp(t);
  const remote = await api(t, "v1/journal/verify", { token, body: {} });
  const { entries, keyring } = await journalPrefix(t, token);
  const local = await verifyJournal(entries, keyring);
  const target = entries[entries.length - 1];
  if (target === undefined) return { pass: false, observed: "the journal is empty" };
  const altered = entries.map((e) =>
    e.seq === target.seq ? { ...e, body: { ...e.body, conformance: "tampered" } } : e,
  );
  const tampered = await verifyJournal(altered, keyring);
  return {
    pass: remote.body.ok === true && local.ok && !tampered.ok,
    observed: `sidecar verify: ${remote.body.ok === true ? `ok (${String(remote.body.checked)})` : JSON.stringify(remote.body).slice(0, 120)}; first ${entries.length} entries verify here: ${local.ok}; altered entry ${target.seq}: ${tampered.ok ? "NOT DETECTED" : tampered.failure.reason}`,
  };
}

/** A probe call with metacharacters or an out-of-type value is refused (needs a probe call). */
export async function contractValidationOverHttp(t: UrlTarget): Promise<Observation> {
  const probe = t.probe;
  if (probe?.textArg === undefined)
    return skip("needs a probe call with a string argument (--probe) in URL mode");
  const runId = await newRun(t);
  const tries: [string, unknown][] = [
    ["shell metacharacters", "x; rm -rf / $(id)"],
    ["out of type", 12345],
  ];
  const seen: string[] = [];
  let pass = true;
  for (const [what, value] of tries) {
    const r = await api(t, "v1/execute", {
      token: t.agentToken,
      body: { runId, tool: probe.tool, parameters: { ...probe.parameters, [probe.textArg]: value } },
    });
    const refused = r.status >= 400 || r.body.decision === "deny";
    pass &&= refused && r.body.result === undefined;
    seen.push(`${what} → ${r.status} ${errCode(r)}`);
  }
  return { pass, observed: seen.join("; ") };
}

/** An executed probe call's evidence envelope, read from the journal, has the OATS §8.4 fields. */
export async function evidenceOverHttp(t: UrlTarget): Promise<Observation> {
  if (t.probe === undefined) return skip("needs a probe call (--probe) in URL mode");
  if (t.operatorToken === undefined)
    return skip("needs an operator token ($WARDEN_OPERATOR_TOKEN) to read the journal");
  const runId = await newRun(t);
  const r = await api(t, "v1/execute", {
    token: t.agentToken,
    body: { runId, tool: t.probe.tool, parameters: t.probe.parameters },
  });
  if (typeof r.body.evidenceId !== "string")
    return { pass: false, observed: `probe → ${r.status} ${errCode(r)}, no evidence` };
  const list = await api(t, `v1/journal?type=warden.executor.evidence&run_id=${encodeURIComponent(runId)}`, {
    token: t.operatorToken,
  });
  const e = (list.body.entries as JournalEntry[] | undefined)?.find(
    (x) => x.body.evidence_id === r.body.evidenceId,
  );
  const b = e?.body ?? {};
  const need = ["tool", "parameters_hash", "output_hash", "duration_ms", "identity", "decision_id"];
  const missing = need.filter((k) => b[k] === undefined || b[k] === null);
  return {
    pass: e !== undefined && missing.length === 0 && b.decision_id === r.body.decisionId,
    observed:
      e === undefined
        ? "the evidence entry is not in the journal"
        : missing.length
          ? `missing ${missing.join(", ")}`
          : `evidence ${String(r.body.evidenceId).slice(0, 8)}… has ${need.join(", ")}`,
  };
}
