// The canonical contract object: what part B signs and verifies. It is the WHOLE parsed
// contract (tool metadata, every argument rule, templates, HTTP/MCP backends, output
// schema, custom types, scope) with defaults applied, as plain JSON data, so a change to
// any part of the contract changes the signed bytes.
import { ToolError } from "../contracts/index.js";
import { type ToolContract, ToolContractSchema } from "./contract-schema.js";

/** Plain JSON form of a contract; pass it to `canonicalBytes` for hashing or signing. */
export function contractToCanonical(contract: ToolContract): Record<string, unknown> {
  const parsed = ToolContractSchema.safeParse(contract);
  if (!parsed.success) {
    throw new ToolError("ERR_TOOL_MANIFEST_INVALID", "not a valid tool contract", {
      details: { issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".")}: ${i.message}`) },
    });
  }
  return plain(parsed.data, "") as Record<string, unknown>;
}

function plain(value: unknown, at: string): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw new ToolError("ERR_TOOL_MANIFEST_INVALID", `non-finite number at ${at}`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => plain(v, `${at}[${i}]`));
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      Object.defineProperty(out, k, {
        value: plain(v, `${at}.${k}`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  throw new ToolError("ERR_TOOL_MANIFEST_INVALID", `unsupported value at ${at}`);
}
