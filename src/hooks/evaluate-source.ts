// PrePluginLoad, PreSkillLoad and PreMCPConnect: source trust (source-trust.ts) turned into
// verdicts. A refused source (look-alike name, a signature that does not verify, an
// allow-listed source that must be signed but is not) is denied; an unknown or changed
// (rug-pull) plugin or MCP server gets the configured disposition (ask / deny by default);
// a skill that is not trusted loads with `strip_hooks` (its instructions, never its hooks),
// a changed one gets the `changed` disposition; a skill's body is scanned for injection.
import { basename } from "node:path";
import { pipesToShell } from "./artifacts.js";
import type { EvalContext } from "./context.js";
import { judgeText } from "./evaluate-text.js";
import type { Verdict } from "./schema-base.js";
import type { HookEventOf } from "./schema-points.js";
import type { SourceJudgement, SourceKind, SourceLoad } from "./source-trust.js";
import { placePath } from "./taxonomy.js";
import { allow, fromSignal, merge } from "./verdicts.js";

const signatureOf = (e: object): unknown => (e as { signature?: unknown }).signature;

function verdictOf(ctx: EvalContext, load: SourceLoad, j: SourceJudgement): Verdict {
  const what = `${load.kind} ${load.id.slice(0, 128)}`;
  const artifacts = [load.id.slice(0, 4096)];
  if (j.outcome === "trusted") return allow("supply_chain", "reputation_check", `${what}: ${j.why}`);
  if (j.outcome === "refused") {
    const source = j.rule === "aarts-source-lookalike" ? "reputation_check" : "signature_verification";
    return fromSignal({
      decision: "deny",
      category: "supply_chain",
      source,
      rule: j.rule,
      reason: `${what}: ${j.why}`,
      artifacts,
    });
  }
  const decision = ctx.sourceTrust.config[j.outcome];
  return fromSignal({
    decision,
    category: "supply_chain",
    source: j.outcome === "changed" ? "signature_verification" : "reputation_check",
    rule: `aarts-source-${j.outcome}`,
    reason: `${what}: ${j.why}`,
    artifacts,
  });
}

export async function prePluginLoad(ctx: EvalContext, e: HookEventOf<"PrePluginLoad">): Promise<Verdict> {
  const load: SourceLoad = {
    kind: "plugin",
    id: e.plugin_id,
    location: e.source,
    hashes: e.file_hashes ?? [],
    signature: signatureOf(e),
  };
  return verdictOf(ctx, load, await ctx.sourceTrust.decide(load));
}

function skillId(e: HookEventOf<"PreSkillLoad">): string {
  const name = e.frontmatter.name;
  return typeof name === "string" && name.trim() !== ""
    ? name.slice(0, 512)
    : basename(e.file_path) || e.file_path;
}

export async function preSkillLoad(ctx: EvalContext, e: HookEventOf<"PreSkillLoad">): Promise<Verdict> {
  const rule = {
    hook: e.hook_point,
    field: "body_content",
    onInjection: "deny",
    onCredential: "deny",
  } as const;
  const body = judgeText(ctx, rule, e.body_content ?? "");
  const kind: SourceKind = "skill";
  const load: SourceLoad = {
    kind,
    id: skillId(e),
    location: e.source,
    hashes: e.file_hash ? [e.file_hash] : [],
    signature: signatureOf(e),
  };
  const judgement = await ctx.sourceTrust.decide(load);
  // A project skill that lives outside the workspace (a link out of it) is not the project's.
  const strayProject =
    e.source === "project" &&
    ctx.workspace !== undefined &&
    !placePath(e.file_path, ctx.workspace).inWorkspace;
  const keepsHooks = judgement.outcome === "trusted" && !strayProject;
  if (keepsHooks || judgement.outcome === "refused" || judgement.outcome === "changed") {
    return merge(verdictOf(ctx, load, judgement), body);
  }
  // Unknown, or trusted by name but not where the project keeps its skills: no hooks.
  const hooks = e.declared_hooks.length;
  const where = strayProject
    ? `a project skill outside the workspace (${e.file_path.slice(0, 256)})`
    : judgement.why;
  const base: Verdict = {
    ...allow(
      "supply_chain",
      "reputation_check",
      `skill ${load.id.slice(0, 128)}: ${where}; ${hooks} declared hooks stripped`,
    ),
    directives: { strip_hooks: true },
  };
  return merge(base, body);
}

export async function preMCPConnect(ctx: EvalContext, e: HookEventOf<"PreMCPConnect">): Promise<Verdict> {
  const cmd = e.server_command ?? "";
  if (await pipesToShell(cmd)) {
    return fromSignal({
      decision: "deny",
      category: "supply_chain",
      source: "pattern_match",
      rule: "aarts-mcp-command-piped-to-shell",
      reason: "the MCP server's launch command pipes a download into a shell",
      artifacts: [cmd.slice(0, 4096)],
    });
  }
  const load: SourceLoad = {
    kind: "mcp-server",
    id: e.server_id,
    location: e.source,
    hashes: [],
    uri: e.server_uri,
    command: e.server_command,
    signature: signatureOf(e),
  };
  return verdictOf(ctx, load, await ctx.sourceTrust.decide(load));
}
