// `warden quarantine list|lift`: an operator's view of every active quarantine and an
// approver's signed lift of a principal quarantine, against a running sidecar.
//   list --url URL [--json]     GET /v1/quarantines (approver or auditor token)
//   lift PRINCIPAL --key FILE --approver ID --reason TEXT [--quarantine-id ID] [--url URL]
//     signs a record of scope warden:principal_quarantine_lift with the approver's Ed25519
//     private key file — the record the console signs — and prints it; with --url, presents
//     it to POST /v1/quarantines/lift (the quarantine id looked up from the list when not
//     given) and prints the answer, exit 1 on a refusal. The token is the approver's own
//     operator credential, from $WARDEN_OPERATOR_TOKEN: the sidecar honours a record only
//     when its signer presents it (docs/console.md, Quarantines).
import type { Command } from "commander";
import { CliError, isoTime } from "../../contracts/index.js";
import { type SignedPrincipalLift, signPrincipalLift } from "../../runtime/index.js";
import { type CliContext, EXIT } from "../io.js";
import { loadApproverKey } from "./approver-key.js";
import { SUMMARY } from "./summaries.js";

interface ListOpts {
  url: string;
  json?: boolean;
}

interface LiftOpts {
  key: string;
  approver: string;
  reason: string;
  quarantineId?: string;
  url?: string;
}

/** One listed quarantine, as GET /v1/quarantines answers (the fields printed here). */
interface Listed {
  kind: string;
  principalId: string;
  trigger: string;
  runId: string | null;
  reason: string;
  setAt: string | null;
  ruleId: string | null;
  quarantineId: string | null;
}

function token(): string {
  const t = process.env.WARDEN_OPERATOR_TOKEN;
  if (!t) throw new CliError("ERR_CLI_USAGE", "--url needs an operator token in $WARDEN_OPERATOR_TOKEN");
  return t;
}

/** A request to the sidecar with the operator token; the status and the body text. */
async function call(
  url: string,
  path: string,
  body?: unknown,
): Promise<{ ok: boolean; status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token()}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(new URL(path, url), {
      method: body === undefined ? "GET" : "POST",
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new CliError("ERR_CLI_INPUT", `cannot reach ${url}`, { cause: err });
  }
  return { ok: res.ok, status: res.status, text: await res.text() };
}

async function listed(ctx: CliContext, url: string): Promise<Listed[] | undefined> {
  const r = await call(url, "/v1/quarantines");
  if (!r.ok) {
    ctx.io.err(`list refused (HTTP ${r.status}): ${r.text}\n`);
    ctx.exitCode = EXIT.failed;
    return undefined;
  }
  return (JSON.parse(r.text) as { quarantines: Listed[] }).quarantines;
}

async function list(ctx: CliContext, opts: ListOpts): Promise<void> {
  const all = await listed(ctx, opts.url);
  if (all === undefined) return;
  if (opts.json === true) {
    ctx.io.out(`${JSON.stringify(all, null, 2)}\n`);
    return;
  }
  if (all.length === 0) ctx.io.out("no active quarantine\n");
  for (const q of all) {
    const rule = q.ruleId === null ? "" : ` rule ${q.ruleId}`;
    ctx.io.out(
      `${q.kind} ${q.principalId}: ${q.trigger}${rule}, since ${q.setAt ?? "?"} (run ${q.runId ?? "-"})\n`,
    );
    ctx.io.out(`  reason: ${q.reason}\n`);
    if (q.quarantineId !== null) ctx.io.out(`  id: ${q.quarantineId}\n`);
  }
}

function signed(principal: string, quarantineId: string, opts: LiftOpts): SignedPrincipalLift {
  const key = loadApproverKey(opts.key);
  if (opts.reason.length < 10) throw new CliError("ERR_CLI_USAGE", "--reason needs at least 10 characters");
  return signPrincipalLift(
    {
      principal,
      quarantine_id: quarantineId,
      approver_id: opts.approver,
      issued_at: isoTime(Date.now()),
      reason: opts.reason,
    },
    key,
  );
}

/** The id of the principal's active quarantine, from --quarantine-id or the sidecar's list. */
async function quarantineIdFor(
  ctx: CliContext,
  principal: string,
  opts: LiftOpts,
): Promise<string | undefined> {
  if (opts.quarantineId !== undefined) return opts.quarantineId;
  if (opts.url === undefined)
    throw new CliError(
      "ERR_CLI_USAGE",
      "--quarantine-id is needed without --url (warden quarantine list shows it)",
    );
  const all = await listed(ctx, opts.url);
  if (all === undefined) return undefined;
  const q = all.find((x) => x.kind === "principal" && x.principalId === principal && x.quarantineId !== null);
  if (q?.quarantineId == null) {
    ctx.io.err(`${principal} has no active principal quarantine\n`);
    ctx.exitCode = EXIT.failed;
    return undefined;
  }
  return q.quarantineId;
}

async function lift(ctx: CliContext, principal: string, opts: LiftOpts): Promise<void> {
  const id = await quarantineIdFor(ctx, principal, opts);
  if (id === undefined) return;
  const record = signed(principal, id, opts);
  if (opts.url === undefined) {
    ctx.io.out(`${JSON.stringify(record)}\n`);
    return;
  }
  const r = await call(opts.url, "/v1/quarantines/lift", record);
  if (r.ok) ctx.io.out(`${r.text}\n`);
  else {
    ctx.io.err(`lift refused (HTTP ${r.status}): ${r.text}\n`);
    ctx.exitCode = EXIT.failed;
  }
}

export function registerQuarantine(program: Command, ctx: CliContext): void {
  const q = program.command("quarantine").description(SUMMARY.quarantine);
  q.command("list")
    .description("every active quarantine of a sidecar (GET /v1/quarantines, $WARDEN_OPERATOR_TOKEN)")
    .requiredOption("--url <url>", "the sidecar")
    .option("--json", "print the list as JSON")
    .action((opts: ListOpts) => list(ctx, opts));
  q.command("lift")
    .description(
      "sign a principal quarantine lift (warden:principal_quarantine_lift) as an approver; --url presents it",
    )
    .argument("<principal>", "the quarantined principal")
    .requiredOption("--key <file>", "the approver's Ed25519 private key file (PEM or JWK)")
    .requiredOption("--approver <id>", "the approver's id (who signs and presents the record)")
    .requiredOption("--reason <text>", "why the quarantine is lifted (journaled; at least 10 characters)")
    .option("--quarantine-id <id>", "the quarantine lifted (sha256:…; looked up with --url when omitted)")
    .option("--url <url>", "a sidecar: POST the record to /v1/quarantines/lift ($WARDEN_OPERATOR_TOKEN)")
    .action((principal: string, opts: LiftOpts) => lift(ctx, principal, opts));
}
