// The gate configuration as `warden run` and `warden exec` read it: the Gate's own
// loader, except that `requireContract` defaults to true (as in the sidecar): a call that
// names no tool contract is denied `contract_required` unless the file says
// `requireContract: false`, the documented opt-out. The file may also hold a `trust:`
// section (the contract trust store, as in the sidecar configuration); its relative
// paths are relative to the file.
import { dirname, resolve } from "node:path";
import { GateError, isPlainObject } from "../contracts/index.js";
import { type LoadedGateConfig, parseGateConfig, requireContractByDefault } from "../gate/index.js";
import { parseApaeSection, type RuntimeApaeConfig, readConfigFile } from "../runtime/index.js";

function invalid(message: string): GateError {
  return new GateError("ERR_GATE_CONFIG_INVALID", message);
}

export interface CliGateConfig {
  gate: LoadedGateConfig;
  /** The `trust:` section as written (validated by the trust store); undefined when absent. */
  trust: unknown;
  /** The file's directory (relative trust paths resolve against it). */
  baseDir: string;
  /** The `apae:` section (docs/trust.md), parsed; undefined when absent (APAE off). */
  apae?: RuntimeApaeConfig;
}

export function loadCliGateConfig(path: string): CliGateConfig {
  let data = readConfigFile(path, invalid);
  let trust: unknown;
  if (isPlainObject(data) && Object.hasOwn(data, "trust")) {
    const { trust: t, ...rest } = data;
    trust = t;
    data = rest;
  }
  let apae: unknown;
  if (isPlainObject(data) && Object.hasOwn(data, "apae")) {
    const { apae: a, ...rest } = data;
    apae = a;
    data = rest;
  }
  const baseDir = dirname(resolve(path));
  return {
    gate: parseGateConfig(requireContractByDefault(data ?? {})),
    trust,
    baseDir,
    ...(apae !== undefined ? { apae: parseApaeSection(apae, baseDir) } : {}),
  };
}
