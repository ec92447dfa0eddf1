// `warden provenance DATA_OR_ECT --journal DB`: which agents touched a piece of data (or an
// ECT's lineage), whether it was transformed, whether the chain is complete — over the ECTs
// of the L3 audit ledger in the journal (docs/trust.md, Provenance). Exit 1 when the chain
// is incomplete or nothing matched. The journal's own integrity is `warden journal verify`.
import type { Command } from "commander";
import { openEmbeddedStore } from "../../journal/index.js";
import {
  ECT_LEDGER_EVENT,
  type EctClaims,
  EctClaimsSchema,
  EctLedgerBodySchema,
  provenanceOf,
} from "../../trust/index.js";
import { type CliContext, EXIT } from "../io.js";
import { SUMMARY } from "./summaries.js";

interface Opts {
  journal: string;
  json?: boolean;
}

function claimsOf(body: unknown): EctClaims | undefined {
  const b = EctLedgerBodySchema.safeParse(body);
  if (!b.success) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(b.data.jws.payload, "base64url").toString("utf8"));
    const c = EctClaimsSchema.safeParse(payload);
    return c.success && c.data.jti === b.data.jti ? c.data : undefined;
  } catch {
    return undefined;
  }
}

async function provenance(ctx: CliContext, query: string, opts: Opts): Promise<void> {
  const store = openEmbeddedStore(opts.journal, { readonly: true });
  let ects: EctClaims[];
  try {
    ects = (await store.query({ type: ECT_LEDGER_EVENT }))
      .map((e) => claimsOf(e.body))
      .filter((c): c is EctClaims => c !== undefined);
  } finally {
    await store.close();
  }
  const a = provenanceOf(ects, query);
  if (opts.json) {
    ctx.io.out(`${JSON.stringify(a)}\n`);
  } else {
    ctx.io.out(
      `${query}: ${a.matched === "none" ? "no ECT or data matched" : `matched by ${a.matched}`}\n` +
        `agents       ${a.agents.join(", ") || "-"}\ntransformed  ${a.transformed ? "yes" : "no"}\n` +
        `complete     ${a.complete ? "yes" : `no${a.missing.length > 0 ? ` (missing ${a.missing.join(", ")})` : ""}`}\n` +
        `sources      ${a.sources.join(", ") || "-"}\n`,
    );
    for (const n of a.chain) {
      const t = n.transformations.length > 0 ? ` [${n.transformations.join(", ")}]` : "";
      ctx.io.out(`  ${new Date(n.iat * 1000).toISOString()} ${n.iss} ${n.exec_act} ${n.jti}${t}\n`);
    }
  }
  if (!a.complete) ctx.exitCode = EXIT.failed;
}

export function registerProvenance(program: Command, ctx: CliContext): void {
  program
    .command("provenance")
    .description(SUMMARY.provenance)
    .argument("<data_or_ect>", "an ECT's jti, or a data hash (an ECT's inp_hash / out_hash)")
    .requiredOption("--journal <db>", "the SQLite journal holding the L3 ECT ledger")
    .option("--json", "print the answer as JSON")
    .action((query: string, opts: Opts) => provenance(ctx, query, opts));
}
