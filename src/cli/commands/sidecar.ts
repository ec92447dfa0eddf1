// `warden sidecar`: the sidecar HTTP server (Ari Kernel §12 sidecar mode). `--config FILE`
// starts it and runs until SIGINT/SIGTERM (graceful shutdown: in-flight calls finish,
// the journal is flushed); `--check` validates the configuration without starting
// anything (exit 0 valid, 2 invalid); `--new-token` mints a bearer token and prints the
// hash to put in the configuration (only the hash is ever stored). A configured journal
// key that does not exist stops the start with ERR_SERVER_JOURNAL_KEY_MISSING naming the
// command that creates it; `--init-keys` creates it (0600, exclusive) and starts.
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  checkSidecarConfig,
  generateToken,
  hashToken,
  initJournalKey,
  loadSidecarConfig,
  openSidecarRuntime,
  startSidecar,
} from "../../server/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { cliReplayHost } from "../replay-host.js";
import { SUMMARY } from "./summaries.js";

const SIDECAR_OPTIONS = defineOptions({
  config: { flags: "--config <file>", description: "sidecar configuration (YAML or JSON)", kind: "value" },
  check: {
    flags: "--check",
    description: "validate the configuration (files, keys, policies, contracts) and exit",
    kind: "flag",
  },
  newToken: {
    flags: "--new-token",
    description: "print a new bearer token and the sha256 hash to configure for it",
    kind: "flag",
  },
  initKeys: {
    flags: "--init-keys",
    description: "create the configured journal key if it does not exist yet (0600), then start",
    kind: "flag",
  },
  host: {
    flags: "--host <host>",
    description: "listen address (overrides the configuration)",
    kind: "value",
  },
  port: {
    flags: "--port <port>",
    description: "listen port (overrides the configuration; 0 picks a free one)",
    kind: "value",
  },
  json: { flags: "--json", description: "machine-readable output for --check and --new-token", kind: "flag" },
});
type SidecarFlags = OptionsOf<typeof SIDECAR_OPTIONS>;

export function registerSidecar(program: Command, ctx: CliContext): void {
  addOptions(program.command("sidecar"), SIDECAR_OPTIONS)
    .description(SUMMARY.sidecar)
    .action(async (opts: SidecarFlags) => {
      if (opts.newToken) {
        const token = generateToken();
        const hash = hashToken(token);
        ctx.io.out(
          opts.json
            ? `${JSON.stringify({ token, tokenSha256: hash })}\n`
            : `token        ${token}\ntokenSha256  ${hash}\n(give the token to the client; put only the hash in the configuration)\n`,
        );
        return;
      }
      if (opts.config === undefined) throw new CliError("ERR_CLI_USAGE", "--config <file> is required");
      if (opts.check && opts.initKeys) {
        throw new CliError("ERR_CLI_USAGE", "--check writes nothing; use --init-keys without --check");
      }
      let port: number | undefined;
      if (opts.port !== undefined) {
        if (!/^[0-9]{1,5}$/.test(opts.port) || Number(opts.port) > 65_535) {
          throw new CliError("ERR_CLI_USAGE", "--port must be an integer in 0..65535");
        }
        port = Number(opts.port);
      }
      const loaded = loadSidecarConfig(opts.config);

      if (opts.check) {
        const report = await checkSidecarConfig(loaded);
        if (opts.json) ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
        else if (report.ok) {
          const s = report.summary;
          ctx.io.out(
            `config OK\nlisten       ${s.listen}\npolicies     ${s.policies} (${s.policyBundleHash ?? "-"})\n` +
              `contracts    ${s.contracts.join(", ") || "-"}\nprincipals   ${s.principals.join(", ")}\n` +
              `approvers    ${s.approvers.join(", ") || "-"}\njournal      ${s.journal}` +
              `${s.journalEntries !== undefined ? ` (${s.journalEntries} entries)` : " (new)"}\n` +
              `signatures   ${s.journalSignatures}\n` +
              `trust        ${s.trust === undefined ? "-" : `${s.trust.mode} (${s.trust.keys} key(s), ${s.trust.revocations} revoked, pins ${s.trust.pins.path ?? "-"})`}\n` +
              `apae         ${s.apae === undefined ? "off" : `on, trust table ${s.apae.store}`}\n` +
              (s.apae?.mechanisms ?? []).map((m) => `  - ${m}\n`).join("") +
              (s.apae?.gaps ?? []).map((g) => `  ! not configured: ${g}\n`).join(""),
          );
        } else {
          for (const p of report.problems) ctx.io.err(`warden: ${p.what}: ${p.message}\n`);
        }
        ctx.exitCode = report.ok ? EXIT.ok : EXIT.usage;
        return;
      }

      if (opts.initKeys) {
        const created = initJournalKey(loaded);
        if (created !== undefined) {
          ctx.io.out(
            `created journal key ${created.keyId}\nprivate      ${created.files.privatePem} (0600), ${created.files.privateJwk} (0600)\n` +
              `public       ${created.files.publicPem} (for warden journal verify --keys)\n`,
          );
        }
      }
      const runtime = await openSidecarRuntime(loaded);
      const server = await startSidecar(
        runtime,
        { ...(opts.host !== undefined ? { host: opts.host } : {}), ...(port !== undefined ? { port } : {}) },
        { replayHost: cliReplayHost },
      );
      // The handlers are in place before the address is printed: whoever reads that line
      // may signal at once, and an unhandled SIGTERM would kill the process unflushed.
      const stopped = new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          ctx.io.out("warden sidecar shutting down (finishing in-flight calls)\n");
          server.close().then(resolve, (err: unknown) => {
            ctx.io.err(`warden: shutdown: ${err instanceof Error ? err.message : String(err)}\n`);
            ctx.exitCode = EXIT.failed;
            resolve();
          });
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      ctx.io.out(`warden sidecar listening on ${server.url}\n`);
      await stopped;
      ctx.io.out("warden sidecar stopped; journal flushed\n");
    });
}
