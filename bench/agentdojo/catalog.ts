// A suite's tools as Warden contracts (src/tools contractFromSchema) plus their
// classification (classify.ts), and the optional per-suite annotation file. The Gate sees
// every tool as toolClass `assistant` with its class as the action.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type CompiledTool,
  compileContract,
  contractFromSchema,
  type ToolClassification,
  usableToolName,
} from "../../src/tools/index.js";
import { type Annotations, type Classification, classifyWith, type ToolClass } from "./classify.js";
import type { Suite, ToolDef } from "./suite.js";

export const TOOL_CLASS = "assistant";
/** The [mcp] server name the derived contracts name (nothing is executed through it). */
export const SIM_SERVER = "agentdojo-recorded";
/** The annotation file the harness looks for in a suite folder. */
export const ANNOTATION_FILE = "warden-annotations.json";

export interface CatalogEntry {
  def: ToolDef;
  tool: CompiledTool;
  cls: Classification;
}

export interface Catalog {
  entries: Map<string, CatalogEntry>;
  /** Tools whose contract could not be derived, with why (their calls are refused). */
  refused: { name: string; why: string }[];
  lookup: { get(name: string): CompiledTool | undefined };
  classify(tool: CompiledTool): ToolClassification;
}

const CLASSES: readonly ToolClass[] = [
  "read",
  "fetch",
  "write",
  "send",
  "pay",
  "share",
  "delete",
  "credential",
];

/** Reads `<suite dir>/warden-annotations.json` (or `file`), or undefined when there is none. */
export function readAnnotations(suite: Suite, file?: string): Annotations | undefined {
  const path = file ?? join(suite.dir, ANNOTATION_FILE);
  if (!existsSync(path)) return undefined;
  const raw = JSON.parse(readFileSync(path, "utf8")) as unknown;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new Error(`${path}: not an object`);
  const out: Annotations = {};
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    const a = (v ?? {}) as { class?: unknown; personalData?: unknown };
    if (a.class !== undefined && !CLASSES.includes(a.class as ToolClass))
      throw new Error(`${path}: ${name}.class must be one of ${CLASSES.join(", ")}`);
    out[name] = {
      ...(a.class !== undefined ? { class: a.class as ToolClass } : {}),
      ...(typeof a.personalData === "boolean" ? { personalData: a.personalData } : {}),
    };
  }
  return out;
}

/** Derives every tool's contract and classification. */
export function buildCatalog(suite: Suite, annotations?: Annotations): Catalog {
  const entries = new Map<string, CatalogEntry>();
  const refused: { name: string; why: string }[] = [];
  const classes = new WeakMap<CompiledTool, ToolClassification>();
  for (const def of suite.tools) {
    if (!usableToolName(def.name)) {
      refused.push({ name: def.name, why: "the name cannot be a contract name" });
      continue;
    }
    const { contract, unsupported } = contractFromSchema(def, { server: SIM_SERVER });
    const compiled = compileContract(contract);
    if (!compiled.ok) {
      refused.push({ name: def.name, why: `${compiled.code}: ${compiled.message}` });
      continue;
    }
    if (unsupported.length > 0)
      refused.push({ name: def.name, why: `arguments left out: ${unsupported.join(", ")}` });
    const cls = classifyWith(def, annotations);
    classes.set(compiled.tool, { toolClass: TOOL_CLASS, action: cls.class, targets: cls.targets });
    entries.set(def.name, { def, tool: compiled.tool, cls });
  }
  return {
    entries,
    refused,
    lookup: { get: (name) => entries.get(name)?.tool },
    classify: (tool) => classes.get(tool) ?? { toolClass: TOOL_CLASS, action: "write" },
  };
}
