import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bindingForContract, ProcessExecutor } from "../../src/executors/index.js";
import { parseContract } from "../../src/tools/index.js";
import { mint } from "./helpers.js";

const work = mkdtempSync(join(tmpdir(), "warden-cb-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const MANIFEST = `
[tool]
name = "greet"
version = "1.2.0"
description = "Say hello"

[args.name]
type = "string"
required = true
position = 1

[command]
exec = ["echo", "hello", "{name}"]

[output]
format = "text"
schema = { type = "string" }
`;

function compiled() {
  const parsed = parseContract(MANIFEST);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.tool;
}

describe("contract bindings", () => {
  it("runs a compiled exec contract's template with the ticket's parameters", async () => {
    const b = bindingForContract(compiled());
    if (b.kind !== "process") throw new Error(b.kind);
    const r = await new ProcessExecutor({ workDir: work }).execute(
      mint("greet", { name: "world" }, { toolClass: "shell" }),
      b.binding,
    );
    if (!r.ok) throw new Error(`${r.code} ${r.message}`);
    expect(r.output.stdout.toString()).toBe("hello world\n");
    expect(r.evidence.tool).toMatchObject({ name: "greet", version: "1.2.0" });
    expect(r.evidence.invocation).toMatchObject({ argv: ["echo", "hello", "world"] });
  });

  it("refuses parameters the contract's validation rejects, before anything runs", async () => {
    const b = bindingForContract(compiled());
    if (b.kind !== "process") throw new Error(b.kind);
    const r = await new ProcessExecutor({ workDir: work }).execute(
      mint("greet", { name: "x; rm -rf /", extra: 1 }, { toolClass: "shell" }),
      b.binding,
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PARAMS_INVALID");
    expect(!r.ok && r.evidence?.invocation).toBeNull();
  });
});
