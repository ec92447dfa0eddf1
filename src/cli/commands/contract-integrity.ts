// `warden contract sign` and `warden contract verify`: the integrity subcommands of the
// `warden contract` group. verify accepts three kinds of file — a tool contract
// manifest (with its `.sig` beside it), a SchemaPin signed schema `{schema, signature}`,
// or a SchemaPin trust bundle — and exits 0 only when the file verified; a failed
// verification exits 1 with its ERR_INTEGRITY_* code, unusable input exits 2.

import type { KeyObject } from "node:crypto";
import type { Command } from "commander";
import { CliError, IntegrityError, parseStrictJson } from "../../contracts/index.js";
import { loadPrivateKeyFile, parsePublicKey } from "../../crypto/index.js";
import {
  type DiscoveryDocument,
  discoveryFromData,
  fetchJsonDocument,
  type IntegrityCode,
  type IntegrityResult,
  loadContract,
  loadProjectTypes,
  PinStore,
  parseTrustBundle,
  type RevocationDocument,
  revocationFromData,
  signContractFile,
  type TrustBundle,
  type Verified,
  verifyContractIntegrity,
  verifySignedSchema,
  verifyTrustBundle,
  wellKnownUrl,
} from "../../tools/index.js";
import { type CliContext, readTextFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";

function fail(code: IntegrityCode, message: string): never {
  throw new IntegrityError(code, message);
}

/** Runs `fn`; an IntegrityError becomes `{ok:false}`, anything else propagates. */
async function attemptAsync<T extends object>(fn: () => Promise<T>): Promise<IntegrityResult<T>> {
  try {
    return { ok: true, ...(await fn()) };
  } catch (err) {
    if (err instanceof IntegrityError)
      return { ok: false, code: err.code as IntegrityCode, message: err.message };
    throw err;
  }
}

const MAX_INPUT = 1024 * 1024;

const TYPES = {
  flags: "--types <file>",
  description: "project-level toolclad.toml with custom types",
  kind: "value",
} as const;
const JSON_FLAG = { flags: "--json", description: "print the result as JSON", kind: "flag" } as const;

const SIGN_OPTIONS = defineOptions({
  key: {
    flags: "--key <pem>",
    description: "ECDSA P-256 private key file (0600)",
    kind: "value",
    required: true,
  },
  domain: {
    flags: "--domain <domain>",
    description: "the publisher domain whose .well-known/schemapin.json holds the key",
    kind: "value",
    required: true,
  },
  types: TYPES,
  json: JSON_FLAG,
});

const VERIFY_OPTIONS = defineOptions({
  pins: {
    flags: "--pins <file>",
    description: "TOFU pin store (JSON); first use pins, a changed key is refused",
    kind: "value",
  },
  wellKnown: {
    flags: "--well-known <file-or-url>",
    description: "the publisher's discovery document (.well-known/schemapin.json)",
    kind: "value",
  },
  bundle: {
    flags: "--bundle <file-or-url>",
    description: "trust bundle with discovery documents and revocations (verified when signed)",
    kind: "value",
  },
  revocation: {
    flags: "--revocation <file-or-url...>",
    description: "standalone revocation document(s)",
    kind: "values",
  },
  trustedKey: {
    flags: "--trusted-key <pem...>",
    description: "public key file(s) trusted without discovery",
    kind: "values",
  },
  singleHash: {
    flags: "--single-hash",
    description: "SchemaPin Go convention: the signature is over the canonical bytes, not their SHA-256",
    kind: "flag",
  },
  domain: {
    flags: "--domain <domain>",
    description: "publisher domain (pin key for signed schemas; must match a contract's .sig)",
    kind: "value",
  },
  toolId: {
    flags: "--tool-id <id>",
    description: "pin identity of a signed schema (default: schema.name)",
    kind: "value",
  },
  requirePin: {
    flags: "--require-pin",
    description: "refuse a key that is not pinned yet (no trust on first use)",
    kind: "flag",
  },
  repin: {
    flags: "--repin",
    description: "accept a changed key and re-pin it (after checking the rotation out of band)",
    kind: "flag",
  },
  types: TYPES,
  allowLoopbackHttp: {
    flags: "--allow-loopback-http",
    description: "allow http:// URLs on loopback hosts (testing, local mirrors)",
    kind: "flag",
  },
  timeoutMs: {
    flags: "--timeout-ms <ms>",
    description: "network timeout for URLs (default 5000)",
    kind: "value",
  },
  json: JSON_FLAG,
});

type VerifyOpts = OptionsOf<typeof VERIFY_OPTIONS>;

const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

function readJson(path: string): unknown {
  return parseStrictJson(readTextFile(path, MAX_INPUT), { maxLength: MAX_INPUT });
}

/** A JSON document from a file or (https, or loopback http when allowed) URL. */
async function documentFrom(source: string, opts: VerifyOpts, wellKnown = false): Promise<unknown> {
  if (!isUrl(source)) return readJson(source);
  const url = wellKnown ? wellKnownUrl(source) : source;
  const r = await fetchJsonDocument(url, {
    allowLoopbackHttp: opts.allowLoopbackHttp === true,
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: Number(opts.timeoutMs) }),
  });
  if (!r.ok) fail(r.code, r.message);
  return r.value;
}

type FileKind =
  | { kind: "manifest" }
  | { kind: "signed-schema"; value: unknown }
  | { kind: "bundle"; value: unknown };

function classify(path: string): FileKind {
  const text = readTextFile(path, MAX_INPUT);
  if (!text.trimStart().startsWith("{")) return { kind: "manifest" };
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxLength: MAX_INPUT });
  } catch {
    return { kind: "manifest" }; // a TOML manifest may start with an inline table; let the loader report
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    if ("schemapin_bundle_version" in value) return { kind: "bundle", value };
    if ("schema" in value) return { kind: "signed-schema", value };
  }
  throw new CliError(
    "ERR_CLI_INPUT",
    `${path} is neither a tool manifest, a signed schema nor a trust bundle`,
  );
}

function loadTypes(path: string | undefined) {
  return path === undefined ? {} : { types: loadProjectTypes(path) };
}

function loadManifest(path: string, typesPath: string | undefined) {
  const loaded = loadContract(path, loadTypes(typesPath));
  if (!loaded.ok) throw new CliError("ERR_CLI_INPUT", `${loaded.code}: ${loaded.message}`);
  return loaded.tool.contract;
}

function report<T extends object>(
  ctx: CliContext,
  opts: VerifyOpts,
  r: IntegrityResult<T>,
  line: (v: T) => string,
): void {
  if (r.ok) {
    const { ok: _ok, ...rest } = r;
    ctx.io.out(opts.json ? `${JSON.stringify({ verified: true, ...rest }, null, 2)}\n` : `${line(r)}\n`);
    return;
  }
  ctx.exitCode = 1;
  if (opts.json) {
    ctx.io.out(`${JSON.stringify({ verified: false, code: r.code, message: r.message }, null, 2)}\n`);
  } else {
    ctx.io.err(`not verified: ${r.code}: ${r.message}\n`);
  }
}

const verifiedLine = (v: Verified) =>
  `verified  ${v.toolId} (${v.domain})\nkey       ${v.fingerprint}${v.developerName === undefined ? "" : ` (${v.developerName})`}\nmode      ${v.hashMode}-hash\npin       ${v.pin}`;

export function registerContractIntegrity(group: Command, ctx: CliContext): void {
  addOptions(
    group
      .command("sign")
      .description("sign the whole parsed contract (SchemaPin: ECDSA P-256, DER, double-hash) into FILE.sig")
      .argument("<file>", "tool contract manifest (*.clad.toml)"),
    SIGN_OPTIONS,
  ).action((file: string, opts: OptionsOf<typeof SIGN_OPTIONS>) => {
    const contract = loadManifest(file, opts.types);
    const pair = loadPrivateKeyFile(opts.key);
    if (pair.type !== "p256")
      throw new CliError("ERR_CLI_USAGE", "SchemaPin signatures need an ECDSA P-256 key (--type p256)");
    const { path, file: sig } = signContractFile(contract, file, {
      privateKey: pair.privateKey,
      domain: opts.domain,
    });
    if (opts.json) {
      ctx.io.out(`${JSON.stringify({ signature_file: path, ...sig }, null, 2)}\n`);
      return;
    }
    ctx.io.out(
      `signed    ${sig.tool_name} (${sig.domain})\nfile      ${path}\ncontract  ${sig.contract_hash}\nkey       ${sig.signer_fingerprint}\n`,
    );
  });

  addOptions(
    group
      .command("verify")
      .description(
        "verify a signed contract, a SchemaPin signed schema or a trust bundle; exit 0 only when verified",
      )
      .argument(
        "<file>",
        "manifest (with FILE.sig beside it), signed schema {schema, signature}, or trust bundle",
      ),
    VERIFY_OPTIONS,
  ).action(async (file: string, opts: VerifyOpts) => {
    if (opts.timeoutMs !== undefined && !/^[1-9]\d{0,5}$/.test(opts.timeoutMs)) {
      throw new CliError("ERR_CLI_USAGE", "--timeout-ms must be a positive integer");
    }
    const what = classify(file);
    const pins = opts.pins === undefined ? undefined : PinStore.open(opts.pins);

    if (what.kind === "bundle") {
      const r = verifyTrustBundle(what.value, pins === undefined ? {} : { pins });
      const out: IntegrityResult<{ kid: string; fingerprint: string; domains: readonly string[] }> = r.ok
        ? { ok: true, kid: r.kid, fingerprint: r.fingerprint, domains: r.bundle.domains }
        : r;
      report(
        ctx,
        opts,
        out,
        (v) =>
          `verified  trust bundle (authority ${v.kid})\nkey       ${v.fingerprint}\ndomains   ${v.domains.join(", ") || "(none)"}`,
      );
      return;
    }

    const trust = await attemptAsync(async () => gatherTrust(opts, pins));
    if (!trust.ok) {
      report(ctx, opts, trust, () => "");
      return;
    }
    const t = {
      ...trust.inputs,
      ...(pins === undefined ? {} : { pins }),
      pinPolicy: opts.requirePin ? ("require" as const) : ("tofu" as const),
      repin: opts.repin === true,
      hashMode: opts.singleHash ? ("single" as const) : ("double" as const),
    };

    if (what.kind === "signed-schema") {
      const domain =
        opts.domain ??
        (opts.wellKnown !== undefined && isUrl(opts.wellKnown)
          ? new URL(opts.wellKnown).hostname
          : undefined);
      if (pins !== undefined && domain === undefined) {
        throw new CliError("ERR_CLI_USAGE", "pinning a signed schema needs --domain (or a --well-known URL)");
      }
      const r = verifySignedSchema(what.value, {
        ...t,
        ...(domain === undefined ? {} : { domain }),
        ...(opts.toolId === undefined ? {} : { toolId: opts.toolId }),
      });
      report(ctx, opts, r, verifiedLine);
      return;
    }

    const contract = loadManifest(file, opts.types);
    const r = verifyContractIntegrity(contract, file, {
      ...t,
      ...(opts.domain === undefined ? {} : { domain: opts.domain }),
    });
    report(ctx, opts, r, (v) => `${verifiedLine(v)}\ncontract  ${v.contractHash}`);
  });
}

interface TrustInputs {
  discovery?: DiscoveryDocument;
  bundle?: TrustBundle;
  revocations: RevocationDocument[];
  trustedKeys: KeyObject[];
}

async function gatherTrust(opts: VerifyOpts, pins: PinStore | undefined): Promise<{ inputs: TrustInputs }> {
  const inputs: TrustInputs = { revocations: [], trustedKeys: [] };
  if (opts.wellKnown !== undefined) {
    inputs.discovery = discoveryFromData(await documentFrom(opts.wellKnown, opts, true));
    // A discovery document fetched from the network names its revocation endpoint;
    // follow it and fail closed if it cannot be read.
    const endpoint = inputs.discovery.revocationEndpoint;
    if (endpoint !== undefined && isUrl(opts.wellKnown)) {
      inputs.revocations.push(revocationFromData(await documentFrom(endpoint, opts)));
    }
  }
  if (opts.bundle !== undefined) {
    const value = await documentFrom(opts.bundle, opts);
    const signed = typeof value === "object" && value !== null && "signature" in value;
    const r = signed ? verifyTrustBundle(value, pins === undefined ? {} : { pins }) : parseTrustBundle(value);
    if (!r.ok) fail(r.code, r.message);
    inputs.bundle = r.bundle;
  }
  for (const source of opts.revocation ?? []) {
    inputs.revocations.push(revocationFromData(await documentFrom(source, opts)));
  }
  for (const path of opts.trustedKey ?? []) {
    try {
      inputs.trustedKeys.push(parsePublicKey(readTextFile(path, MAX_INPUT)));
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new IntegrityError("ERR_INTEGRITY_KEY_INVALID", `${path} is not a public key`);
    }
  }
  return { inputs };
}
