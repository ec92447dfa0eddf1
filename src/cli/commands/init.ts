// `warden init [DIR]`: a working starter deployment with no hand steps. It writes
// sidecar.yaml (fresh random tokens; only their SHA-256 hashes are stored), a starter
// policy, two example contracts, a work directory with a sample file, and the journal
// key in keys/ (0700; private files 0600, written exclusively), outside the work
// directory the tools are served from. The starter contracts are signed with a contract
// key generated beside it (P-256, 0600), and the configuration enforces those signatures
// (`trust: { mode: enforce }`), so a changed contract stops the sidecar from starting.
// The tokens are printed once, with the exact next commands. A non-empty DIR is refused (ERR_CLI_INIT_NOT_EMPTY) unless --force; --force
// rewrites the starter files and tokens but keeps an existing key (and so the journal).
// A DIR inside a git checkout that git does not ignore is refused
// (ERR_CLI_INIT_INSIDE_CHECKOUT, checkout.ts) unless --inside-checkout.
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  generateKeyPair,
  type KeyPair,
  keyFilePaths,
  loadPrivateKeyFile,
  saveKeyPair,
} from "../../crypto/index.js";
import { generateToken, hashToken } from "../../server/index.js";
import { loadContract, signContractFile } from "../../tools/index.js";
import { deploymentPlacement } from "../checkout.js";
import { SAMPLE_FILE, STARTER, STARTER_CONTRACTS, STARTER_POLICY, sidecarYaml } from "../init-files.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const INIT_OPTIONS = defineOptions({
  force: {
    flags: "--force",
    description: "write into a non-empty directory (rewrites the starter files; keeps an existing key)",
    kind: "flag",
  },
  insideCheckout: {
    flags: "--inside-checkout",
    description: "write inside a git checkout even where git does not ignore the directory (keys included)",
    kind: "flag",
  },
  port: { flags: "--port <port>", description: "port the sidecar listens on (default 8787)", kind: "value" },
  shell: {
    flags: "--shell",
    description:
      'print only shell lines (tokens as exports, the rest as comments): eval "$(warden init DIR --shell)"',
    kind: "flag",
  },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});
type InitFlags = OptionsOf<typeof INIT_OPTIONS>;

export interface InitResult {
  dir: string;
  config: string;
  keyId: string;
  keyCreated: boolean;
  publicKey: string;
  tokens: { agent: string; operator: string };
  next: string[];
}

function prepareDir(dir: string, force: boolean): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory())
      throw new CliError("ERR_CLI_USAGE", `${dir} exists and is not a directory`);
    if (readdirSync(dir).length > 0 && !force) {
      throw new CliError(
        "ERR_CLI_INIT_NOT_EMPTY",
        `${dir} is not empty; choose a new directory, or pass --force to rewrite the starter files there (an existing journal key is kept)`,
      );
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o755 });
}

/** Refuses DIR inside a git checkout unless git ignores its key and configuration (or --inside-checkout). */
function refuseCommittable(dir: string, insideCheckout: boolean): void {
  if (insideCheckout) return;
  const at = deploymentPlacement(dir, [`${STARTER.keys}/${STARTER.keyName}.pem`, STARTER.config]);
  if (at.kind !== "tracked") return;
  throw new CliError(
    "ERR_CLI_INIT_INSIDE_CHECKOUT",
    `${dir} is inside the git checkout ${at.checkout} and not ignored there, so its private keys could be committed; ` +
      `choose a directory outside the checkout (e.g. warden init ~/warden-deployment), add ${at.rel}/ to .gitignore, or pass --inside-checkout`,
  );
}

/** The journal key in DIR/keys: created (0600, exclusive) or, with --force, kept. */
function journalKey(dir: string): { keyId: string; created: boolean; publicKey: string } {
  const keys = join(dir, STARTER.keys);
  mkdirSync(keys, { recursive: true, mode: 0o700 });
  chmodSync(keys, 0o700);
  const paths = keyFilePaths(keys, STARTER.keyName);
  if (existsSync(paths.privatePem)) {
    return { keyId: loadPrivateKeyFile(paths.privatePem).keyId, created: false, publicKey: paths.publicPem };
  }
  const pair = generateKeyPair("ed25519");
  saveKeyPair(pair, keys, { name: STARTER.keyName });
  return { keyId: pair.keyId, created: true, publicKey: paths.publicPem };
}

/** The contract-signing key in DIR/keys (P-256, 0600): created, or with --force kept. */
function contractKey(dir: string): KeyPair {
  const keys = join(dir, STARTER.keys);
  const paths = keyFilePaths(keys, STARTER.contractKeyName);
  if (existsSync(paths.privatePem)) return loadPrivateKeyFile(paths.privatePem);
  const pair = generateKeyPair("p256");
  saveKeyPair(pair, keys, { name: STARTER.contractKeyName });
  return pair;
}

/** The operator's approval key in DIR/keys (Ed25519, 0600): created, or with --force kept. */
function operatorKey(dir: string): string {
  const paths = keyFilePaths(join(dir, STARTER.keys), STARTER.operatorKeyName);
  if (!existsSync(paths.privatePem))
    saveKeyPair(generateKeyPair("ed25519"), join(dir, STARTER.keys), { name: STARTER.operatorKeyName });
  return loadPrivateKeyFile(paths.privatePem).publicKey.export({ format: "pem", type: "spki" }).toString();
}

/** Signs every starter contract with the deployment's contract key (a .sig.json beside each). */
function signStarterContracts(dir: string, key: KeyPair): void {
  for (const name of Object.keys(STARTER_CONTRACTS)) {
    const file = join(dir, STARTER.contracts, name);
    const loaded = loadContract(file);
    if (!loaded.ok) throw new CliError("ERR_CLI_INPUT", `starter contract ${name}: ${loaded.message}`);
    signContractFile(loaded.tool.contract, file, {
      privateKey: key.privateKey,
      domain: STARTER.contractDomain,
    });
  }
}

function writeStarterFiles(dir: string, port: number, tokens: InitResult["tokens"]): void {
  writeFileSync(
    join(dir, STARTER.config),
    sidecarYaml(
      {
        agentSha256: hashToken(tokens.agent),
        operatorSha256: hashToken(tokens.operator),
        operatorPublicKey: operatorKey(dir),
      },
      port,
    ),
    { mode: 0o644 },
  );
  writeFileSync(join(dir, STARTER.policy), STARTER_POLICY);
  mkdirSync(join(dir, STARTER.contracts), { recursive: true });
  for (const [name, text] of Object.entries(STARTER_CONTRACTS)) {
    writeFileSync(join(dir, STARTER.contracts, name), text);
  }
  mkdirSync(join(dir, STARTER.work), { recursive: true });
  writeFileSync(join(dir, STARTER.work, SAMPLE_FILE.name), SAMPLE_FILE.text);
}

/** How to run this CLI again: `node <path>/bin/warden.js` when started that way, else `warden`. */
function selfCommand(): string {
  const script = process.argv[1];
  if (script !== undefined && basename(script) === "warden.js") {
    const rel = relative(process.cwd(), script);
    return `node ${rel.startsWith("..") || rel === "" ? script : rel}`;
  }
  return "warden";
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

function nextCommands(dir: string, port: number, publicKey: string): string[] {
  const warden = selfCommand();
  const rel = (p: string) => shellQuote(relative(process.cwd(), p) || ".");
  // Runs are created by the sidecar (POST /v1/runs) and bound to the token's principal.
  const body = `{"runId":"'"$WARDEN_RUN"'","tool":"echo","parameters":{"message":"hello from my agent"}}`;
  const auth = `-H "authorization: Bearer $WARDEN_TOKEN"`;
  return [
    `${warden} sidecar --config ${rel(join(dir, STARTER.config))} &`,
    `WARDEN_RUN=$(curl -s --retry 10 --retry-connrefused -X POST http://127.0.0.1:${port}/v1/runs ${auth} | sed -E 's/.*"runId":"([^"]+)".*/\\1/')`,
    `curl -s -w '\\n' http://127.0.0.1:${port}/v1/execute ${auth} -H "content-type: application/json" -d '${body}'`,
    "kill %1; wait",
    `${warden} journal verify --db ${rel(join(dir, STARTER.journal))} --keys ${rel(publicKey)}`,
  ];
}

function render(r: InitResult, shell: boolean): string {
  const exports = [
    `export WARDEN_TOKEN=${r.tokens.agent}`,
    `export WARDEN_OPERATOR_TOKEN=${r.tokens.operator}`,
  ];
  const info = [
    `Warden starter deployment in ${r.dir}`,
    `  ${STARTER.config}   sidecar configuration (token hashes only; listens on 127.0.0.1)`,
    `  ${STARTER.policy}    starter policy: echo and word_count allowed, "rm" in an echo denied, anything else denied`,
    `  ${STARTER.contracts}/     ${Object.keys(STARTER_CONTRACTS).join(", ")}`,
    `  ${STARTER.work}/          the tools' work directory (${SAMPLE_FILE.name})`,
    `  ${STARTER.keys}/          journal key ${r.keyId} (${r.keyCreated ? "new" : "kept"}; directory 0700, private files 0600), outside ${STARTER.work}/`,
    `                 and ${STARTER.contractKeyName}.pem, the key that signed the contracts (trust mode enforce)`,
    `                 and ${STARTER.operatorKeyName}.pem, the operator's Ed25519 key for signing step-up verdicts (Python client, scripts)`,
    `  ${STARTER.journal}     the signed journal, created (0600) when the sidecar first starts`,
  ];
  if (shell) {
    return `${[...info, "tokens: exported below (agent: WARDEN_TOKEN, operator: WARDEN_OPERATOR_TOKEN); not stored anywhere", "next:", ...r.next].map((l) => `# ${l}`).join("\n")}\n${exports.join("\n")}\n`;
  }
  return (
    `${info.join("\n")}\n\n` +
    "Tokens (shown once; only their SHA-256 hashes are stored, in sidecar.yaml):\n" +
    `  agent     ${r.tokens.agent}\n  operator  ${r.tokens.operator}   (approvals, journal, metrics; the console at /console)\n\n` +
    `Next, in this shell:\n${[...exports, ...r.next].map((l) => `  ${l}`).join("\n")}\n`
  );
}

export function registerInit(program: Command, ctx: CliContext): void {
  addOptions(program.command("init"), INIT_OPTIONS)
    .description(SUMMARY.init)
    .argument("[dir]", "directory to create or fill (must be empty unless --force)", ".")
    .action((dirArg: string, opts: InitFlags) => {
      let port = 8787;
      if (opts.port !== undefined) {
        if (!/^[0-9]{1,5}$/.test(opts.port) || Number(opts.port) < 1 || Number(opts.port) > 65_535) {
          throw new CliError("ERR_CLI_USAGE", "--port must be an integer in 1..65535");
        }
        port = Number(opts.port);
      }
      if (opts.shell && opts.json)
        throw new CliError("ERR_CLI_USAGE", "--shell and --json exclude each other");
      const dir = resolve(dirArg);
      refuseCommittable(dir, opts.insideCheckout === true);
      prepareDir(dir, opts.force === true);
      const key = journalKey(dir);
      const tokens = { agent: generateToken(), operator: generateToken() };
      writeStarterFiles(dir, port, tokens);
      signStarterContracts(dir, contractKey(dir));
      const result: InitResult = {
        dir,
        config: join(dir, STARTER.config),
        keyId: key.keyId,
        keyCreated: key.created,
        publicKey: key.publicKey,
        tokens,
        next: nextCommands(dir, port, key.publicKey),
      };
      ctx.io.out(opts.json ? `${JSON.stringify(result, null, 2)}\n` : render(result, opts.shell === true));
    });
}
