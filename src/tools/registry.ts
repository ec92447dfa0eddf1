// The contract registry: every `*.clad.toml` in one directory, compiled once. A manifest
// that does not parse, collides with another tool's name, or — with `requireSignatures`
// — is unsigned, tampered, signed by an unpinned or revoked key, is not registered, and
// the reason is kept in `rejected` so an operator can see why a tool is missing.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ToolError, type WardenErrorCode } from "../contracts/index.js";
import type { CompiledTool } from "./compile.js";
import type { CustomType } from "./contract-schema.js";
import {
  type ContractIntegrityOptions,
  SIGNATURE_FILE_SUFFIX,
  type Verified,
  verifyContractIntegrity,
} from "./integrity/index.js";
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
  /** The tool name, when the manifest parsed. */
  tool?: string;
}

/** A registered contract whose signature verified (only with requireSignatures). */
export interface VerifiedContract {
  file: string;
  tool: string;
  verified: Verified & { contractHash: string };
}

type Checked =
  | { ok: true; verified: (Verified & { contractHash: string }) | undefined }
  | { ok: false; rejected: RejectedContract };

function checkSignature(file: string, tool: CompiledTool, options: RegistryOptions): Checked {
  if (options.requireSignatures !== true) return { ok: true, verified: undefined };
  const sig = `${file}${SIGNATURE_FILE_SUFFIX}`;
  if (lstatSync(sig, { throwIfNoEntry: false })?.isFile() === false) {
    // A signature file must live in the directory as a regular file, like its manifest.
    return {
      ok: false,
      rejected: {
        file,
        tool: tool.name,
        code: "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
        message: `${sig}: not a regular file`,
      },
    };
  }
  const verified = verifyContractIntegrity(tool.contract, file, options.integrity ?? {});
  if (!verified.ok) {
    return {
      ok: false,
      rejected: { file, tool: tool.name, code: verified.code, message: `${file}: ${verified.message}` },
    };
  }
  const { ok: _ok, ...rest } = verified;
  return { ok: true, verified: rest };
}

export class ContractRegistry {
  readonly #tools: ReadonlyMap<string, CompiledTool>;
  readonly #files: ReadonlyMap<string, string>;
  /** Manifests that were not registered, with the reason. */
  readonly rejected: readonly RejectedContract[];
  /** Registered contracts with their verified signer (empty without requireSignatures). */
  readonly verified: readonly VerifiedContract[];

  private constructor(
    tools: Map<string, { tool: CompiledTool; file: string }>,
    rejected: RejectedContract[],
    verified: VerifiedContract[],
  ) {
    this.#tools = new Map([...tools].map(([n, t]) => [n, t.tool]));
    this.#files = new Map([...tools].map(([n, t]) => [n, t.file]));
    this.rejected = rejected;
    this.verified = verified;
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
    const byName = new Map<string, { tool: CompiledTool; file: string; verified?: VerifiedContract }[]>();
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
      const checked = checkSignature(file, loaded.tool, options);
      if (!checked.ok) {
        rejected.push(checked.rejected);
        continue;
      }
      const list = byName.get(loaded.tool.name) ?? [];
      list.push({
        tool: loaded.tool,
        file,
        ...(checked.verified === undefined
          ? {}
          : { verified: { file, tool: loaded.tool.name, verified: checked.verified } }),
      });
      byName.set(loaded.tool.name, list);
    }
    const tools = new Map<string, { tool: CompiledTool; file: string }>();
    const verified: VerifiedContract[] = [];
    for (const [toolName, list] of byName) {
      const only = list.length === 1 ? list[0] : undefined;
      if (only !== undefined) {
        tools.set(toolName, { tool: only.tool, file: only.file });
        if (only.verified !== undefined) verified.push(only.verified);
        continue;
      }
      // Which of two same-named tools is meant cannot be decided safely: register neither.
      for (const { file } of list) {
        rejected.push({
          file,
          tool: toolName,
          code: "ERR_TOOL_REGISTRY_DUPLICATE",
          message: `${file}: tool name '${toolName}' is declared by ${list.length} manifests`,
        });
      }
    }
    return new ContractRegistry(tools, rejected, verified);
  }

  get(name: string): CompiledTool | undefined {
    return this.#tools.get(name);
  }

  /** The manifest path a registered tool was loaded from. */
  fileOf(name: string): string | undefined {
    return this.#files.get(name);
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
