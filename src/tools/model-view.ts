// What the model is shown of a tool: its name, description, an MCP `inputSchema` built
// from the typed arguments and the `outputSchema`. Never the binary, command template,
// mappings, defaults, URL, headers, secrets, MCP server or policy metadata — the model
// proposes typed parameters; how they become an action is not its business.

import { ToolError } from "../contracts/index.js";
import type { ArgValue, ResolvedArg } from "./arg-types.js";
import { type CompiledTool, compileContract } from "./compile.js";
import type { ToolContract } from "./contract-schema.js";

export interface ModelTool {
  name: string;
  description: string;
  inputSchema: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
    additionalProperties: false;
  };
  outputSchema?: Record<string, unknown>;
}

const IPV4_PATTERN = "^(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}$";

function argSchema(arg: ResolvedArg): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  switch (arg.base) {
    case "integer":
      s.type = "integer";
      break;
    case "port":
      Object.assign(s, { type: "integer", minimum: 1, maximum: 65535 });
      break;
    case "number":
      s.type = "number";
      break;
    case "boolean":
      s.type = "boolean";
      break;
    case "enum":
      Object.assign(s, { type: "string", enum: [...(arg.allowed ?? [])] });
      break;
    case "url":
      Object.assign(s, { type: "string", format: "uri" });
      break;
    case "ip_address":
      s.type = "string";
      s.anyOf = [{ pattern: IPV4_PATTERN }, { format: "ipv6" }];
      break;
    case "json":
      // The pinned schema the value is validated against, as the model must follow it.
      Object.assign(s, structuredClone(arg.jsonSchema?.schema ?? {}));
      break;
    default:
      s.type = "string";
  }
  if (arg.description !== undefined) s.description = arg.description;
  // Clamped bounds are not rejections, so they are not advertised as hard limits.
  if (arg.min !== undefined && !arg.clamp) s.minimum = arg.min;
  if (arg.max !== undefined && !arg.clamp) s.maximum = arg.max;
  if (arg.pattern !== undefined) s.pattern = arg.pattern.source;
  if (s.type === "string" && arg.base !== "enum") s.maxLength = arg.maxLength;
  if (arg.default !== undefined) s.default = arg.default satisfies ArgValue;
  return s;
}

/** The MCP tool definition shown to the model. */
export function toModelTool(source: CompiledTool | ToolContract): ModelTool {
  const tool = "backend" in source ? source : compileOrThrow(source);
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  for (const [name, arg] of tool.args) {
    properties[name] = argSchema(arg);
    if (arg.required) required.push(name);
  }
  const model: ModelTool = {
    name: tool.name,
    description: tool.contract.tool.description,
    inputSchema: { type: "object", properties, additionalProperties: false },
  };
  if (required.length > 0) model.inputSchema.required = required;
  const out = tool.contract.output.schema;
  // MCP requires an object-typed outputSchema; other shapes are validated but not advertised.
  if (out.type === "object") model.outputSchema = structuredClone(out);
  return model;
}

function compileOrThrow(contract: ToolContract): CompiledTool {
  const c = compileContract(contract);
  if (!c.ok) throw new ToolError(c.code as "ERR_TOOL_MANIFEST_INVALID", c.message);
  return c.tool;
}
