// Tool output on its way back to the model: bounded in size, decoded strictly, parsed by
// the declared builtin parser and validated against `[output.schema]`. Anything malformed
// is rejected here, before the model sees a byte of it.
import { parseStrictJson, type WardenErrorCode } from "../contracts/index.js";
import type { CompiledTool } from "./compile.js";

export interface OutputOptions {
  /** Lower cap than the contract's `output.max_bytes` (never a higher one). */
  maxBytes?: number;
}

export type OutputResult =
  | { ok: true; value: unknown }
  | { ok: false; code: WardenErrorCode; message: string };

const MAX_JSON_DEPTH = 64;
const MAX_ROWS = 100_000;

export function parseOutput(
  tool: CompiledTool,
  raw: string | Uint8Array,
  options: OutputOptions = {},
): OutputResult {
  const cap = Math.min(tool.contract.output.max_bytes, options.maxBytes ?? Number.POSITIVE_INFINITY);
  const size = typeof raw === "string" ? Buffer.byteLength(raw, "utf8") : raw.byteLength;
  if (size > cap)
    return {
      ok: false,
      code: "ERR_TOOL_OUTPUT_TOO_LARGE",
      message: `output is ${size} bytes; the cap is ${cap}`,
    };
  let text: string;
  if (typeof raw === "string") {
    text = raw;
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch {
      return { ok: false, code: "ERR_TOOL_OUTPUT_PARSE", message: "output is not valid UTF-8" };
    }
  }
  const parsed = parseBody(tool.contract.output.format, text);
  if (!parsed.ok) return parsed;
  const validate = tool.outputValidator;
  if (!validate(parsed.value)) {
    const e = validate.errors?.[0];
    const where = e?.instancePath === "" || e === undefined ? "output" : `output${e.instancePath}`;
    return {
      ok: false,
      code: "ERR_TOOL_OUTPUT_SCHEMA",
      message: `${where} ${e?.message ?? "does not match the output schema"}`,
    };
  }
  return parsed;
}

function parseBody(format: string, text: string): OutputResult {
  const bad = (message: string): OutputResult => ({ ok: false, code: "ERR_TOOL_OUTPUT_PARSE", message });
  const json = (s: string): unknown => parseStrictJson(s, { maxLength: s.length, maxDepth: MAX_JSON_DEPTH });
  switch (format) {
    case "text":
      return { ok: true, value: { raw_output: text } };
    case "json":
      try {
        return { ok: true, value: json(text) };
      } catch (err) {
        return bad(`output is not valid JSON: ${(err as Error).message}`);
      }
    case "jsonl": {
      const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
      if (lines.length > MAX_ROWS) return bad(`more than ${MAX_ROWS} lines`);
      const rows: unknown[] = [];
      for (const [i, line] of lines.entries()) {
        try {
          rows.push(json(line));
        } catch (err) {
          return bad(`line ${i + 1} is not valid JSON: ${(err as Error).message}`);
        }
      }
      return { ok: true, value: { parsed_output: rows } };
    }
    case "csv": {
      const rows = parseCsv(text);
      if (typeof rows === "string") return bad(rows);
      return { ok: true, value: { parsed_output: rows } };
    }
    default:
      return {
        ok: false,
        code: "ERR_TOOL_OUTPUT_PARSER_UNSUPPORTED",
        message: `no builtin parser for ${format} output`,
      };
  }
}

/** RFC 4180 CSV with a header row; canonical integers, decimals and true/false become typed. */
export function parseCsv(text: string): Record<string, unknown>[] | string {
  const records: string[][] = [];
  let field = "";
  let row: string[] = [];
  let quoted = false;
  let i = 0;
  const endRow = () => {
    row.push(field);
    field = "";
    if (!(row.length === 1 && row[0] === "")) records.push(row);
    row = [];
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== "") return `stray quote in row ${records.length + 1}`;
      quoted = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRow();
      if (records.length > MAX_ROWS) return `more than ${MAX_ROWS} rows`;
    } else field += c;
    i++;
  }
  if (quoted) return "unterminated quoted field";
  if (field !== "" || row.length > 0) endRow();
  const [header, ...body] = records;
  if (header === undefined) return [];
  if (new Set(header).size !== header.length) return "duplicate column names in the header";
  if (header.some((h) => h === "__proto__")) return "forbidden column name";
  const out: Record<string, unknown>[] = [];
  for (const [n, cells] of body.entries()) {
    if (cells.length !== header.length)
      return `row ${n + 2} has ${cells.length} fields; the header has ${header.length}`;
    const obj: Record<string, unknown> = {};
    header.forEach((h, k) => {
      obj[h] = typed(cells[k] as string);
    });
    out.push(obj);
  }
  return out;
}

function typed(cell: string): unknown {
  if (cell === "true" || cell === "false") return cell === "true";
  if (/^-?(0|[1-9]\d{0,14})$/.test(cell)) return Number(cell);
  if (/^-?(0|[1-9]\d{0,14})\.\d{1,15}$/.test(cell)) return Number(cell);
  return cell;
}
