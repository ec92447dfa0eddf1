// A live credential written into a project file (Write, Edit, MultiEdit, NotebookEdit):
// the journal's credential patterns (src/journal redactString, through detect.ts) over the
// text the call puts into the file — never the text it removes (`old_string`), so taking a
// leaked key out of a file is not refused. Only credential shapes that are live secrets
// count; shapes common in ordinary code (a `password=` assignment in a test, a JWT or a
// `postgres://user:pass@localhost` fixture, Stripe test keys, AWS's documented example
// key) do not. docs/hooks-files.md "Secrets written into files".
import type { CredentialKind } from "../journal/index.js";
import { scanText } from "./detect.js";
import type { CanonicalTool, Verdict } from "./schema-base.js";
import { fromSignal } from "./verdicts.js";

const LIVE: ReadonlySet<CredentialKind> = new Set<CredentialKind>([
  "private_key",
  "aws_access_key_id",
  "aws_secret_access_key",
  "github_token",
  "anthropic_key",
  "openai_key",
  "slack_token",
  "stripe_key",
  "google_api_key",
]);

/** Documented placeholders and test-mode keys: not live. */
const PLACEHOLDERS = /\bAKIA[A-Z0-9]{9}EXAMPLE\b|\b[rsp]k_test_[A-Za-z0-9]{16,}\b/g;

const NEW_TEXT_FIELDS = ["content", "contents", "new_string", "new_source", "new_str", "code_edit"];
const PATCH_FIELDS = ["patch", "input", "diff"];

/** The lines a patch (Codex's apply_patch, a unified diff) adds. */
function addedLines(patch: string): string {
  return patch
    .split("\n")
    .filter((l) => l.startsWith("+") && !l.startsWith("+++"))
    .map((l) => l.slice(1))
    .join("\n");
}

/** The text a write or edit call puts into the file. */
export function writtenText(input: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const k of NEW_TEXT_FIELDS) {
    const v = input[k];
    if (typeof v === "string") parts.push(v);
  }
  for (const k of PATCH_FIELDS) {
    const v = input[k];
    if (typeof v === "string") parts.push(addedLines(v));
  }
  const edits = input.edits;
  if (Array.isArray(edits)) {
    for (const e of edits.slice(0, 1024)) {
      if (
        typeof e === "object" &&
        e !== null &&
        typeof (e as Record<string, unknown>).new_string === "string"
      )
        parts.push((e as Record<string, unknown>).new_string as string);
    }
  }
  return parts.join("\n");
}

/** The kinds of live credential the call writes (empty: none). */
export function liveCredentialsWritten(input: Record<string, unknown>): CredentialKind[] {
  const text = writtenText(input).replace(PLACEHOLDERS, "");
  if (text === "") return [];
  return scanText(text).credentials.filter((k) => LIVE.has(k));
}

const WRITING: ReadonlySet<CanonicalTool> = new Set<CanonicalTool>(["file_write", "file_edit"]);

/** The engine's signal on a write that carries a live credential (rule aarts-credential-in-write). */
export function credentialInWrite(tool: CanonicalTool, input: Record<string, unknown>): Verdict[] {
  if (!WRITING.has(tool)) return [];
  const kinds = liveCredentialsWritten(input);
  if (kinds.length === 0) return [];
  return [
    fromSignal({
      decision: "deny",
      category: "data_exfiltration",
      source: "pattern_match",
      rule: "aarts-credential-in-write",
      reason: `the ${tool} call writes a live credential (${kinds.join(", ")}) into a file; keep secrets in the environment or a secret store`,
      artifacts: kinds.map((k) => `[REDACTED:${k}]`),
    }),
  ];
}
