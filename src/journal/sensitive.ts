// DARE's sensitive-payload form: a value marked sensitive never enters the journal
// in clear; the entry keeps its sha256 (so anyone holding the clear value can prove
// it is the one recorded) and a reference to where the protected copy lives.
// A member named `payload` takes DARE's envelope form (the member is removed and
// `payload_hash` + `payload_ref` are set beside it, as in ToolRequestEnvelope.inputs);
// any other member's value is replaced by `{ payload_hash, payload_ref }`.
import {
  isPlainObject,
  JournalError,
  type PayloadRef,
  PayloadRefSchema,
  sha256Of,
} from "../contracts/index.js";

export interface SensitiveMark {
  /** JSON Pointer (RFC 6901) to an object member of the body, e.g. "/inputs/payload". */
  path: string;
  ref: PayloadRef;
}

function parsePointer(pointer: string): string[] {
  if (!pointer.startsWith("/")) {
    throw new JournalError(
      "ERR_JOURNAL_SENSITIVE_PATH",
      "a sensitive path is a JSON Pointer naming a member",
    );
  }
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Applies sensitive marks to a body that is already a private copy; mutates and returns it. */
export function applySensitive(body: Record<string, unknown>, marks: readonly SensitiveMark[]): void {
  for (const mark of marks) {
    const ref = PayloadRefSchema.safeParse(mark.ref);
    if (!ref.success) {
      throw new JournalError("ERR_JOURNAL_SENSITIVE_PATH", `payload_ref for ${mark.path} is invalid`);
    }
    const tokens = parsePointer(mark.path);
    const key = tokens.pop()!;
    let parent: unknown = body;
    for (const t of tokens) {
      parent = isPlainObject(parent) && Object.hasOwn(parent, t) ? parent[t] : undefined;
    }
    if (!isPlainObject(parent) || !Object.hasOwn(parent, key)) {
      throw new JournalError("ERR_JOURNAL_SENSITIVE_PATH", `sensitive path ${mark.path} names no member`);
    }
    const payload_hash = sha256Of(parent[key]);
    if (key === "payload") {
      delete parent[key];
      parent.payload_hash = payload_hash;
      parent.payload_ref = ref.data;
    } else {
      parent[key] = { payload_hash, payload_ref: ref.data };
    }
  }
}
