// `warden keys generate|show`: key pairs on disk; `show` prints public information only.
import { mkdirSync } from "node:fs";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  generateKeyPair,
  KEY_TYPES,
  type KeyType,
  loadPublicKeyFile,
  publicKeyInfo,
  saveKeyPair,
} from "../../crypto/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const GENERATE_OPTIONS = defineOptions({
  type: {
    flags: "--type <type>",
    description: "ed25519 (journal, messages) or p256 (contracts, credentials)",
    kind: "value",
    required: true,
  },
  out: {
    flags: "--out <dir>",
    description: "directory to write the key files to (created if missing)",
    kind: "value",
    required: true,
  },
  name: { flags: "--name <name>", description: "base file name (default: the key type)", kind: "value" },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});

const SHOW_OPTIONS = defineOptions({
  json: { flags: "--json", description: "print as JSON", kind: "flag" },
});

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program.command("keys").description(SUMMARY.keys);
  addOptions(
    keys
      .command("generate")
      .description("generate a key pair and write it as PEM and JWK files (private files mode 0600)"),
    GENERATE_OPTIONS,
  ).action((opts: OptionsOf<typeof GENERATE_OPTIONS>) => {
    if (!(KEY_TYPES as readonly string[]).includes(opts.type)) {
      throw new CliError("ERR_CLI_USAGE", `--type must be one of ${KEY_TYPES.join(", ")}`);
    }
    mkdirSync(opts.out, { recursive: true, mode: 0o700 });
    const pair = generateKeyPair(opts.type as KeyType);
    const files = saveKeyPair(pair, opts.out, opts.name === undefined ? {} : { name: opts.name });
    const info = publicKeyInfo(pair.publicKey);
    if (opts.json) {
      ctx.io.out(
        `${JSON.stringify({ type: info.type, keyId: info.keyId, fingerprint: info.fingerprint, files }, null, 2)}\n`,
      );
      return;
    }
    ctx.io.out(
      `type         ${info.type}\nkey id       ${info.keyId}\nfingerprint  ${info.fingerprint}\n` +
        `private      ${files.privatePem} (0600), ${files.privateJwk} (0600)\n` +
        `public       ${files.publicPem}, ${files.publicJwk}\n`,
    );
  });
  addOptions(
    keys
      .command("show")
      .description("print the public information of a key file (never private material)")
      .argument("<file>", "PEM or JWK key file, public or private"),
    SHOW_OPTIONS,
  ).action((file: string, opts: OptionsOf<typeof SHOW_OPTIONS>) => {
    const info = publicKeyInfo(loadPublicKeyFile(file));
    if (opts.json) {
      ctx.io.out(`${JSON.stringify(info, null, 2)}\n`);
      return;
    }
    ctx.io.out(
      `type         ${info.type}\nkey id       ${info.keyId}\nfingerprint  ${info.fingerprint}\n${info.publicKeyPem}`,
    );
  });
}
