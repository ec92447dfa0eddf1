// The options of `warden journal append|verify|export|show|head`, declared once (their
// parsed types come from these specs; see ../options.ts).
import { defineOptions, type OptionsOf } from "../options.js";

const JSON_FLAG = { flags: "--json", description: "print the result as JSON", kind: "flag" } as const;
const db = (description: string) =>
  ({ flags: "--db <file>", description, kind: "value", required: true }) as const;
const KEY = {
  flags: "--key <file>",
  description: "Ed25519 private key file of the journal",
  kind: "value",
  required: true,
} as const;

export const APPEND_OPTIONS = defineOptions({
  db: db("journal database (created if missing)"),
  key: KEY,
  type: {
    flags: "--type <type>",
    description: "event type, e.g. warden.operator.override",
    kind: "value",
    required: true,
  },
  body: {
    flags: "--body <json>",
    description: "entry body: a JSON object, or @FILE",
    kind: "value",
    required: true,
  },
  run: { flags: "--run <id>", description: "run_id", kind: "value" },
  trace: { flags: "--trace <id>", description: "trace_id (32 lowercase hex)", kind: "value" },
  json: { ...JSON_FLAG, description: "print the appended entry as JSON" },
});

export const VERIFY_OPTIONS = defineOptions({
  db: {
    flags: "--db <file>",
    description:
      "journal database, or a JSONL export; repeat it to verify the per-replica chains of one journal together",
    kind: "repeat",
  },
  url: {
    flags: "--url <url>",
    description:
      "instead of --db: the PostgreSQL journal of distributed mode (postgres://… or env:NAME); every chain, verified together",
    kind: "value",
  },
  chain: {
    flags: "--chain <name>",
    description: 'with --url: verify only this chain (a replica\'s node name; "" is the global chain)',
    kind: "value",
  },
  keys: {
    flags: "--keys <files...>",
    description: "trusted public key files (PEM or JWK); the key of seq 1 must be among them",
    kind: "values",
  },
  expectHead: {
    flags: "--expect-head <file>",
    description: "a signed head (from `warden journal head`) the journal must reach",
    kind: "value",
  },
  workers: {
    flags: "--workers <n>",
    description: "worker threads for signature checks (default: all cores for large journals)",
    kind: "value",
  },
  json: { ...JSON_FLAG, description: "print the report as JSON" },
  approverKeys: {
    flags: "--approver-keys <id=file...>",
    description:
      "approver public keys (Ed25519 PEM): every HITL record must be signed by a key of the approver it names",
    kind: "values",
  },
});

export const EXPORT_OPTIONS = defineOptions({
  db: { flags: "--db <file>", description: "journal database (or --url)", kind: "value" },
  url: {
    flags: "--url <url>",
    description: "instead of --db: the PostgreSQL journal of distributed mode, with --chain",
    kind: "value",
  },
  chain: {
    flags: "--chain <name>",
    description: 'with --url: the chain to export (a replica\'s node name; "" is the global chain)',
    kind: "value",
  },
  format: { flags: "--format <format>", description: "jsonl", kind: "value", required: true },
  out: { flags: "--out <file>", description: "write to a file instead of stdout", kind: "value" },
});

export const SHOW_OPTIONS = defineOptions({
  db: db("journal database"),
  run: { flags: "--run <id>", description: "only this run_id", kind: "value" },
  type: { flags: "--type <type>", description: "only this event type", kind: "value" },
  decision: {
    flags: "--decision <decision>",
    description: "only entries with this policy decision",
    kind: "value",
  },
  since: {
    flags: "--since <time>",
    description: "only entries at or after this RFC 3339 time",
    kind: "value",
  },
  limit: {
    flags: "--limit <n>",
    description: "at most this many entries, the most recent (default 50)",
    kind: "value",
  },
  json: { ...JSON_FLAG, description: "print entries as JSON" },
});

export const HEAD_OPTIONS = defineOptions({
  db: { flags: "--db <file>", description: "journal database (or --url)", kind: "value" },
  url: {
    flags: "--url <url>",
    description: "instead of --db: the PostgreSQL journal of distributed mode, with --chain",
    kind: "value",
  },
  chain: {
    flags: "--chain <name>",
    description: 'with --url: the chain whose head to sign (a replica\'s node name; "" is the global chain)',
    kind: "value",
  },
  key: KEY,
  out: { flags: "--out <file>", description: "also write the signed head to this file", kind: "value" },
});

export type AppendOpts = OptionsOf<typeof APPEND_OPTIONS>;
export type VerifyOpts = OptionsOf<typeof VERIFY_OPTIONS>;
export type ExportOpts = OptionsOf<typeof EXPORT_OPTIONS>;
export type ShowOpts = OptionsOf<typeof SHOW_OPTIONS>;
export type HeadOpts = OptionsOf<typeof HEAD_OPTIONS>;
