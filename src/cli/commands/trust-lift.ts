// `warden trust lift AGENT --key APPROVER.pem --count N --reason TEXT [--url URL]`: the
// approver's tool for an early quarantine lift (docs/trust.md, Early lift). Signs the
// `apae:quarantine_lift` record with the approver's Ed25519 private key file and prints it;
// with --url, presents it to the sidecar's POST /v1/apae/lift with the approver's operator
// token from $WARDEN_OPERATOR_TOKEN and prints the answer (exit 1 on a refusal).
import type { Command } from "commander";
import { CliError, isoTime } from "../../contracts/index.js";
import { DEFAULT_TRUST_CONFIG, LIFT_SCOPE, type SignedLift, signLift } from "../../trust/index.js";
import { type CliContext, EXIT } from "../io.js";
import { loadApproverKey } from "./approver-key.js";

interface LiftOpts {
  key: string;
  count: string;
  reason: string;
  truster?: string;
  url?: string;
}

function signed(agent: string, opts: LiftOpts): SignedLift {
  const count = Number(opts.count);
  if (!Number.isInteger(count) || count < 1)
    throw new CliError("ERR_CLI_USAGE", "--count is the quarantine episode, a positive integer");
  const approver = loadApproverKey(opts.key);
  return signLift(
    {
      scope: LIFT_SCOPE,
      truster: opts.truster ?? DEFAULT_TRUST_CONFIG.self_id,
      subject: agent,
      quarantine_count: count,
      issued_at: isoTime(Date.now()),
      reason: opts.reason,
    },
    approver,
  );
}

async function present(ctx: CliContext, url: string, record: SignedLift): Promise<void> {
  const token = process.env.WARDEN_OPERATOR_TOKEN;
  if (!token)
    throw new CliError("ERR_CLI_USAGE", "--url needs the approver's token in $WARDEN_OPERATOR_TOKEN");
  let res: Response;
  try {
    res = await fetch(new URL("/v1/apae/lift", url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(record),
    });
  } catch (err) {
    throw new CliError("ERR_CLI_INPUT", `cannot reach ${url}`, { cause: err });
  }
  const text = await res.text();
  if (res.ok) ctx.io.out(`${text}\n`);
  else {
    ctx.io.err(`lift refused (HTTP ${res.status}): ${text}\n`);
    ctx.exitCode = EXIT.failed;
  }
}

async function lift(ctx: CliContext, agent: string, opts: LiftOpts): Promise<void> {
  const record = signed(agent, opts);
  if (opts.url === undefined) ctx.io.out(`${JSON.stringify(record)}\n`);
  else await present(ctx, opts.url, record);
}

export function registerTrustLift(trust: Command, ctx: CliContext): void {
  trust
    .command("lift")
    .description("sign an early quarantine lift (apae:quarantine_lift) as an approver; --url presents it")
    .argument("<agent>", "the quarantined agent (subject)")
    .requiredOption("--key <file>", "the approver's Ed25519 private key file (PEM or JWK)")
    .requiredOption("--count <n>", "the quarantine episode lifted (the agent's quarantineCount)")
    .requiredOption("--reason <text>", "why the quarantine is lifted (journaled)")
    .option("--truster <id>", "the deployment's trust id (default: deployment)")
    .option("--url <url>", "a sidecar: POST the record to /v1/apae/lift ($WARDEN_OPERATOR_TOKEN)")
    .action((agent: string, opts: LiftOpts) => lift(ctx, agent, opts));
}
