// The contract registry: every `*.clad.toml` in one directory, compiled once. A manifest
// that does not parse, collides with another tool's name, or — with `requireSignatures`
// — is unsigned, tampered, signed by an unpinned or revoked key, is not registered, and
// the reason is kept in `rejected` so an operator can see why a tool is missing.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ToolError, type WardenErrorCode } from "../contracts/index.js";
import type { CompiledTool } from "./compile.js";
import type { CustomType } from "./contract-schema.js";
import { type ContractIntegrityOptions, verifyContractIntegrity } from "./integrity/index.js";
import { loadContract, loadProjectTypes } from "./manifest.js";
import { type ModelTool, toModelTool } from "./model-view.js";

export const MANIFEST_SUFFIX = ".clad.toml";
export const PROJECT_TYPES_FILE = "toolclad.toml";

export interface RegistryOptions {
  /** Refuse any contract whose signature does not verify (see tools/integrity). */
  requireSignatures?: boolean;
  /** Trust configuration for signature checks: discovery, bundle, pins, revocations. */
  integrity?: ContractIntegrityOptions;
  /** Project types; default: `toolclad.toml` in the directory when present. */
  types?: Readonly<Record<string, CustomType>>;
}

export interface RejectedContract {
  file: string;
  code: WardenErrorCode;
  message: string;
}

export class ContractRegistry {
  readonly #tools: ReadonlyMap<string, CompiledTool>;
  /** Manifests that were not registered, with the reason. */
  readonly rejected: readonly RejectedContract[];

  private constructor(tools: Map<string, CompiledTool>, rejected: RejectedContract[]) {
    this.#tools = tools;
    this.rejected = rejected;
  }

  /** Loads every `*.clad.toml` directly inside `dir` (regular files only, sorted by name). */
  static load(dir: string, options: RegistryOptions = {}): ContractRegistry {
    let names: string[];
    try {
      names = readdirSync(dir)
        .filter((n) => n.endsWith(MANIFEST_SUFFIX))
        .sort();
    } catch (err) {
      throw new ToolError(
        "ERR_TOOL_REGISTRY_IO",
        `cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    const typesFile = join(dir, PROJECT_TYPES_FILE);
    const types = options.types ?? (existsSync(typesFile) ? loadProjectTypes(typesFile) : undefined);
    const rejected: RejectedContract[] = [];
    const byName = new Map<string, { tool: CompiledTool; file: string }[]>();
    for (const name of names) {
      const file = join(dir, name);
      if (!lstatSync(file).isFile()) {
        rejected.push({ file, code: "ERR_TOOL_REGISTRY_IO", message: `${file}: not a regular file` });
        continue;
      }
      const loaded = loadContract(file, types === undefined ? {} : { types });
      if (!loaded.ok) {
        rejected.push({ file, code: loaded.code, message: loaded.message });
        continue;
      }
      if (options.requireSignatures === true) {
        const verified = verifyContractIntegrity(loaded.tool.contract, file, options.integrity ?? {});
        if (!verified.ok) {
          rejected.push({ file, code: verified.code, message: `${file}: ${verified.message}` });
          continue;
        }
      }
      const list = byName.get(loaded.tool.name) ?? [];
      list.push({ tool: loaded.tool, file });
      byName.set(loaded.tool.name, list);
    }
    const tools = new Map<string, CompiledTool>();
    for (const [toolName, list] of byName) {
      if (list.length === 1) {
        tools.set(toolName, (list[0] as { tool: CompiledTool }).tool);
        continue;
      }
      // Which of two same-named tools is meant cannot be decided safely: register neither.
      for (const { file } of list) {
        rejected.push({
          file,
          code: "ERR_TOOL_REGISTRY_DUPLICATE",
          message: `${file}: tool name '${toolName}' is declared by ${list.length} manifests`,
        });
      }
    }
    return new ContractRegistry(tools, rejected);
  }

  get(name: string): CompiledTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Registered tool names, sorted. */
  names(): string[] {
    return [...this.#tools.keys()].sort();
  }

  /** The model's view of every registered tool. */
  modelTools(): ModelTool[] {
    return this.names().map((n) => toModelTool(this.#tools.get(n) as CompiledTool));
  }
}
