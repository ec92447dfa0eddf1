// An upstream's listed resources and prompts are text the model reads, like a tool's
// description: each is pinned on first sight and scanned (mcp-scan.ts) exactly as a tool is,
// through the same pin store, under the key `resource:<uri>` or `prompt:<name>`. A listed
// entry whose metadata changed since it was pinned is refused like a rug-pulled tool; a
// flagged one is refused until an operator approves it (`warden mcp approve`).
import type { McpPromptInfo, McpResourceInfo, McpToolInfo } from "./mcp-connection.js";

export type McpMetadataKind = "resource" | "prompt";

const PREFIXES: readonly McpMetadataKind[] = ["resource", "prompt"];

/**
 * The pin key of a listed resource or prompt, at most 1024 characters (a shared pin table's
 * key stays indexable); entries that agree on their first 1024 share a pin, so the second
 * one seen is refused as changed (fail closed).
 */
export function metadataKey(kind: McpMetadataKind, entry: McpResourceInfo | McpPromptInfo): string {
  const id = kind === "resource" ? (entry as McpResourceInfo).uri : entry.name;
  return `${kind}:${String(id)}`.slice(0, 1024);
}

/**
 * A listed resource or prompt as the pin and the scan see it: its key as the name, its
 * description, and every other field the client is shown (name, title, mime type,
 * arguments and their descriptions) in place of an input schema.
 */
export function metadataAsTool(kind: McpMetadataKind, entry: McpResourceInfo | McpPromptInfo): McpToolInfo {
  const { description, ...rest } = entry as unknown as Record<string, unknown>;
  return {
    name: metadataKey(kind, entry),
    description: typeof description === "string" ? description : undefined,
    inputSchema: rest,
  };
}

/** The kind and id a pin key names, or undefined for a tool's name. */
export function parseMetadataKey(key: string): { kind: McpMetadataKind; id: string } | undefined {
  for (const kind of PREFIXES)
    if (key.startsWith(`${kind}:`)) return { kind, id: key.slice(kind.length + 1) };
  return undefined;
}
