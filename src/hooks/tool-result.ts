// The text of a tool result, as the model will read it, bounded. Hosts deliver results in
// several shapes: a plain string (Read, Bash), an object (WebFetch's {result, url, …}), and
// for MCP tools the MCP CallToolResult — an array of content blocks
// `[{type:"text",text}, {type:"image",data,mimeType}, {type:"resource",resource:{uri,text|blob}},
// {type:"resource_link",uri,name}]`, possibly wrapped as `{content:[…], isError}` and with a
// `structuredContent` object. Text blocks, resource texts and structured content are what
// the model reads; base64 payloads (image, audio, blob) are not scanned as text (their
// mime type and URI are). A JSON string (Cursor's `result_json`) is read as its value.
import { boundedTextOf, MAX_SCAN_CHARS } from "../context/index.js";

export interface ResultText {
  text: string;
  /** Part of the result lay beyond the scan budget and was not read. */
  truncated: boolean;
}

const BINARY_KEYS: ReadonlySet<string> = new Set(["data", "blob"]);

type Json = unknown;

/** Drops base64 payloads of media blocks and resources; keeps everything the model reads as text. */
function readable(v: Json, depth: number): Json {
  if (depth > 64 || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => readable(x, depth + 1));
  const o = v as Record<string, unknown>;
  const media = o.type === "image" || o.type === "audio" || typeof o.blob === "string";
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (media && BINARY_KEYS.has(k)) continue;
    out[k] = readable(x, depth + 1);
  }
  return out;
}

/** A string that is a JSON object or array (an adapter that passes results through as text). */
function parsedJson(s: string): Json | undefined {
  const t = s.trimStart();
  if (!(t.startsWith("{") || t.startsWith("[")) || s.length > MAX_SCAN_CHARS) return undefined;
  try {
    return JSON.parse(s) as Json;
  } catch {
    return undefined;
  }
}

/** The readable text of a tool result, at most `budget` characters (the scan budget). */
export function resultText(result: unknown, budget = MAX_SCAN_CHARS): ResultText {
  const value = typeof result === "string" ? (parsedJson(result) ?? result) : result;
  if (typeof value === "string") {
    return { text: value.slice(0, budget), truncated: value.length > budget };
  }
  return boundedTextOf(readable(value, 0), budget);
}
