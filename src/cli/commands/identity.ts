// `warden identity …`: AgentPin agent identity. `init` makes a domain key (P-256, private
// files 0600) and its discovery document; `issue` signs a credential with it; `verify`
// checks a credential offline (or through a trust bundle / the well-known chain) and is
// the stable interface auditors and CI use; `pin` is the operator's re-pin after a key
// change. Exit codes: 0 valid, 1 not valid, 2 bad usage or unreadable input.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import { generateKeyPair, loadPrivateKeyFile, saveKeyPair } from "../../crypto/index.js";
import {
  agentPinJwkOf,
  agentUrn,
  buildDiscoveryDocument,
  type DocumentSource,
  findKey,
  issueCredential,
  KeyPinStore,
  OnlineResolver,
  parseTrustBundleText,
  StaticSource,
  type VerificationResult,
  validateDiscovery,
  verifyCredential,
} from "../../identity/index.js";
import { agentPinFetcher } from "../../runtime/index.js";
import { writeFileAtomic } from "../../tools/index.js";
import { type CliContext, EXIT, readTextFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const MAX_DOC = 4 * 1024 * 1024;
const DISCOVERY_FILE = "agent-identity.json";
const KEY_NAME = "agentpin";

const usage = (msg: string) => new CliError("ERR_CLI_USAGE", msg);

function readJson(path: string): unknown {
  try {
    return parseStrictJson(readTextFile(path, MAX_DOC), { maxLength: MAX_DOC });
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError("ERR_CLI_INPUT", `${path} is not JSON: ${(err as Error).message}`);
  }
}

function integerOption(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw usage(`--${name} must be an integer ${min}..${max}`);
  }
  return Number(text);
}

/** `15m`, `1h`, `900s` or `900` as seconds. */
export function parseTtl(text: string): number {
  const m = /^(\d{1,6})([smh]?)$/.exec(text);
  if (m === null) throw usage("--ttl is a duration like 900, 900s, 15m or 1h");
  const seconds = Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
  if (seconds < 1 || seconds > 86_400) throw usage("--ttl must be 1s..24h");
  return seconds;
}

const csv = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

const INIT = defineOptions({
  domain: { flags: "--domain <domain>", description: "the domain the key speaks for", kind: "value" },
  out: {
    flags: "--out <dir>",
    description: "directory for the key and the discovery document (default .)",
    kind: "value",
  },
  kid: { flags: "--kid <kid>", description: "key id (default <domain>-<year>-01)", kind: "value" },
  agent: {
    flags: "--agent <name>",
    description: "declare one agent (name or urn:agentpin:…)",
    kind: "value",
  },
  capabilities: {
    flags: "--capabilities <list>",
    description: "the agent's capabilities, comma-separated",
    kind: "value",
  },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});

function runInit(ctx: CliContext, o: OptionsOf<typeof INIT>): void {
  if (o.domain === undefined) throw usage("--domain is required");
  const dir = o.out ?? ".";
  const docPath = join(dir, DISCOVERY_FILE);
  if (existsSync(docPath))
    throw new CliError("ERR_CLI_INPUT", `${docPath} exists; refusing to replace a domain key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = new Date();
  const kid = o.kid ?? `${o.domain}-${now.getUTCFullYear()}-01`;
  const pair = generateKeyPair("p256");
  const agents =
    o.agent === undefined
      ? []
      : [
          {
            agent_id: agentUrn(o.domain, o.agent),
            name: o.agent,
            capabilities: csv(o.capabilities ?? ""),
            status: "active" as const,
          },
        ];
  const doc = buildDiscoveryDocument({
    domain: o.domain,
    key: pair.privateKey,
    kid,
    agents,
    updatedAt: now.toISOString(),
  });
  const files = saveKeyPair(pair, dir, { name: KEY_NAME });
  writeFileSync(docPath, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o644, flag: "wx" });
  const out = {
    domain: o.domain,
    kid,
    discovery: docPath,
    privateKey: files.privatePem,
    agents: agents.map((a) => a.agent_id),
  };
  ctx.io.out(
    o.json === true
      ? `${JSON.stringify(out, null, 2)}\n`
      : `domain     ${o.domain}\nkid        ${kid}\ndiscovery  ${docPath} (publish at https://${o.domain}/.well-known/${DISCOVERY_FILE})\nkey        ${files.privatePem} (0600)\n`,
  );
}

const ISSUE = defineOptions({
  agent: {
    flags: "--agent <id>",
    description: "agent name or urn:agentpin:… (declared in the discovery document)",
    kind: "value",
  },
  capabilities: {
    flags: "--capabilities <list>",
    description: "capabilities, comma-separated",
    kind: "value",
  },
  ttl: {
    flags: "--ttl <duration>",
    description: "lifetime: 900, 900s, 15m, 1h (at most 24h)",
    kind: "value",
  },
  audience: {
    flags: "--audience <aud>",
    description: "the verifier's domain, or * for a bearer credential",
    kind: "value",
  },
  dir: {
    flags: "--dir <dir>",
    description: "the directory `identity init` wrote (default .)",
    kind: "value",
  },
  out: {
    flags: "--out <file>",
    description: "write the credential here (0600) instead of printing it",
    kind: "value",
  },
});

function runIssue(ctx: CliContext, o: OptionsOf<typeof ISSUE>): void {
  if (o.agent === undefined || o.capabilities === undefined || o.ttl === undefined) {
    throw usage("--agent, --capabilities and --ttl are required");
  }
  const dir = o.dir ?? ".";
  const raw = readJson(join(dir, DISCOVERY_FILE)) as { entity?: unknown };
  const domain = typeof raw.entity === "string" ? raw.entity : "";
  const d = validateDiscovery(raw, domain);
  if (!d.ok) throw new CliError("ERR_CLI_INPUT", `${DISCOVERY_FILE}: ${d.message}`);
  const pair = loadPrivateKeyFile(join(dir, `${KEY_NAME}.pem`));
  const mine = d.value.public_keys.find((k) => k.x === agentPinJwkOf(pair.publicKey, k.kid).x);
  if (mine === undefined)
    throw new CliError("ERR_CLI_INPUT", "the private key is not a key of the discovery document");
  const agentId = agentUrn(domain, o.agent);
  if (!d.value.agents.some((a) => a.agent_id === agentId)) {
    throw new CliError("ERR_CLI_INPUT", `agent ${agentId} is not declared in ${DISCOVERY_FILE}`);
  }
  const token = issueCredential({
    privateKey: pair.privateKey,
    kid: mine.kid,
    issuer: domain,
    agentId,
    capabilities: csv(o.capabilities),
    ttlSeconds: parseTtl(o.ttl),
    now: Math.floor(Date.now() / 1000),
    audience: o.audience,
  });
  if (o.out === undefined) ctx.io.out(`${token}\n`);
  else {
    writeFileSync(o.out, `${token}\n`, { mode: 0o600, flag: "wx" });
    ctx.io.out(`wrote ${o.out} (0600): AgentPin credential for ${agentId}, valid ${o.ttl}\n`);
  }
}

const VERIFY = defineOptions({
  discovery: {
    flags: "--discovery <file>",
    description: "a discovery document (repeat for delegation chains)",
    kind: "repeat",
  },
  revocation: {
    flags: "--revocation <file>",
    description: "the issuer's revocation document",
    kind: "value",
  },
  bundle: {
    flags: "--bundle <file>",
    description: "an AgentPin trust bundle (documents and revocations)",
    kind: "value",
  },
  online: {
    flags: "--online",
    description: "fall back to https://<domain>/.well-known/agent-identity.json",
    kind: "flag",
  },
  pins: {
    flags: "--pins <file>",
    description: "a pin store in the upstream KeyPinStore JSON format",
    kind: "value",
  },
  updatePins: {
    flags: "--update-pins",
    description: "write a first-use pin back to --pins (only then)",
    kind: "flag",
  },
  audience: { flags: "--audience <aud>", description: "this verifier's audience", kind: "value" },
  now: { flags: "--now <unix-seconds>", description: "the verifier's clock (default: now)", kind: "value" },
  skew: {
    flags: "--skew <seconds>",
    description: "clock skew allowed (default 60, at most 300)",
    kind: "value",
  },
  maxTtl: {
    flags: "--max-ttl <seconds>",
    description: "longest credential lifetime accepted (default 86400)",
    kind: "value",
  },
  json: { flags: "--json", description: "print the §6.7 result object as JSON", kind: "flag" },
});

function sourceFor(o: OptionsOf<typeof VERIFY>, now: () => number): DocumentSource {
  const online = o.online === true ? new OnlineResolver({ fetchJson: agentPinFetcher(), now }) : undefined;
  const bundle =
    o.bundle === undefined ? undefined : parseTrustBundleText(readTextFile(o.bundle, 64 * MAX_DOC), online);
  const next = bundle ?? online;
  const docs = o.discovery.map(readJson);
  const revs = o.revocation === undefined ? [] : [readJson(o.revocation)];
  if (docs.length === 0 && next === undefined) {
    if (revs.length > 0) throw usage("--revocation needs --discovery or --bundle");
    throw usage("give --discovery FILE, --bundle FILE or --online");
  }
  return new StaticSource(
    docs,
    revs,
    next === undefined ? { issuerFallback: true } : { issuerFallback: docs.length > 0, next },
  );
}

function loadPins(path: string | undefined): KeyPinStore {
  if (path === undefined || !existsSync(path)) return new KeyPinStore();
  try {
    return KeyPinStore.fromJson(readTextFile(path, MAX_DOC));
  } catch (err) {
    throw new CliError("ERR_CLI_INPUT", `${path}: ${(err as Error).message}`);
  }
}

function printResult(ctx: CliContext, r: VerificationResult, json: boolean): void {
  if (json) {
    ctx.io.out(`${JSON.stringify(r, null, 2)}\n`);
    return;
  }
  if (r.valid) {
    const chain =
      r.delegation_chain === null
        ? ""
        : `\ndelegation   ${r.delegation_chain.map((l) => `${l.role} ${l.domain}`).join(" → ")} (verified)`;
    ctx.io.out(
      `valid        ${r.agent_id}\nissuer       ${r.issuer}\ncapabilities ${(r.capabilities ?? []).join(", ")}\npinning      ${r.key_pinning?.status ?? "-"}${chain}\n`,
    );
  } else ctx.io.out(`invalid      ${r.error_code}: ${r.error_message}\n`);
}

async function runVerify(ctx: CliContext, file: string, o: OptionsOf<typeof VERIFY>): Promise<void> {
  const now = integerOption("now", o.now, 0, Number.MAX_SAFE_INTEGER) ?? Math.floor(Date.now() / 1000);
  if (o.updatePins === true && o.pins === undefined) throw usage("--update-pins needs --pins FILE");
  const token = readTextFile(file, 64 * 1024).trim();
  const pins = loadPins(o.pins);
  const v = await verifyCredential(token, {
    source: sourceFor(o, () => now),
    pins,
    audience: o.audience,
    now,
    skewSeconds: integerOption("skew", o.skew, 0, 300),
    maxTtlSeconds: integerOption("max-ttl", o.maxTtl, 1, 86_400),
  });
  // Written only when this verification pinned a key on first use (never for a failure).
  if (v.ok && v.pinEvent !== null && o.updatePins === true && o.pins !== undefined) {
    writeFileAtomic(o.pins, pins.toJson(), 0o600);
  }
  printResult(ctx, v.result, o.json === true);
  ctx.exitCode = v.ok ? EXIT.ok : EXIT.failed;
}

const PIN = defineOptions({
  discovery: { flags: "--discovery <file>", description: "the domain's discovery document", kind: "value" },
  kid: { flags: "--kid <kid>", description: "the key to trust", kind: "value" },
  pins: {
    flags: "--pins <file>",
    description: "the pin store to update (created if missing)",
    kind: "value",
  },
});

function runPin(ctx: CliContext, o: OptionsOf<typeof PIN>): void {
  if (o.discovery === undefined || o.kid === undefined || o.pins === undefined) {
    throw usage("--discovery, --kid and --pins are required");
  }
  const raw = readJson(o.discovery) as { entity?: unknown };
  const domain = typeof raw.entity === "string" ? raw.entity : "";
  const d = validateDiscovery(raw, domain);
  if (!d.ok) throw new CliError("ERR_CLI_INPUT", `${o.discovery}: ${d.message}`);
  const jwk = findKey(d.value, o.kid);
  if (jwk === undefined) throw new CliError("ERR_CLI_INPUT", `no key ${o.kid} in ${o.discovery}`);
  const pins = loadPins(o.pins);
  const event = pins.add(domain, jwk, new Date().toISOString());
  writeFileAtomic(o.pins, pins.toJson(), 0o600);
  ctx.io.out(`${JSON.stringify(event, null, 2)}\n`);
}

export function registerIdentity(program: Command, ctx: CliContext): void {
  const group = program.command("identity").description(SUMMARY.identity);
  addOptions(
    group.command("init").description("create a domain key (P-256) and its AgentPin discovery document"),
    INIT,
  ).action((o: OptionsOf<typeof INIT>) => runInit(ctx, o));
  addOptions(
    group.command("issue").description("issue an AgentPin credential for a declared agent"),
    ISSUE,
  ).action((o: OptionsOf<typeof ISSUE>) => runIssue(ctx, o));
  addOptions(
    group
      .command("verify")
      .description("verify an AgentPin credential; exit 0 valid, 1 not valid, 2 bad usage")
      .argument("<credential-file>"),
    VERIFY,
  ).action((file: string, o: OptionsOf<typeof VERIFY>) => runVerify(ctx, file, o));
  addOptions(
    group
      .command("pin")
      .description("trust a domain key in a pin store (the operator's re-pin after a key change)"),
    PIN,
  ).action((o: OptionsOf<typeof PIN>) => runPin(ctx, o));
}
