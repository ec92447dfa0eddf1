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

const HTTP_MANIFEST = `
[tool]
name = "items"
version = "1.0.0"
description = "Fetch an item"

[http]
method = "GET"
url = "https://api.example.com/items"
headers = { "Authorization" = "Bearer {_secret:token}" }

[output]
format = "json"
[output.schema]
type = "object"
`;

function httpSpec(secretEnv: Record<string, string | undefined>) {
  const parsed = parseContract(HTTP_MANIFEST);
  if (!parsed.ok) throw new Error(parsed.message);
  const b = bindingForContract(parsed.tool, { secretEnv });
  if (b.kind !== "http") throw new Error(b.kind);
  const spec = b.binding.build({});
  // Without JIT secrets the request is built synchronously, as before.
  if (spec instanceof Promise) throw new Error("expected a synchronous build");
  return spec;
}

describe("secret variable names: WARDEN_SECRET_* with the TOOLCLAD_SECRET_* alias", () => {
  it("reads the documented WARDEN_SECRET_<NAME>", () => {
    const spec = httpSpec({ WARDEN_SECRET_TOKEN: "w-value" });
    expect(spec.headers).toEqual({ Authorization: "Bearer w-value" });
    expect(spec.secrets).toEqual(["w-value"]);
  });

  it("accepts the ToolClad alias TOOLCLAD_SECRET_<NAME> when the WARDEN name is absent", () => {
    const spec = httpSpec({ TOOLCLAD_SECRET_TOKEN: "t-value" });
    expect(spec.headers).toEqual({ Authorization: "Bearer t-value" });
    expect(spec.secrets).toEqual(["t-value"]);
  });

  it("when both are set, WARDEN_SECRET_<NAME> wins and the alias value is sent nowhere", () => {
    const spec = httpSpec({ WARDEN_SECRET_TOKEN: "w-value", TOOLCLAD_SECRET_TOKEN: "t-value" });
    expect(spec.headers).toEqual({ Authorization: "Bearer w-value" });
    expect(spec.secrets).toEqual(["w-value"]);
    expect(JSON.stringify(spec)).not.toContain("t-value");
  });

  it("an empty WARDEN_SECRET_<NAME> is missing and the alias does not override it (fail closed)", () => {
    expect(() => httpSpec({ WARDEN_SECRET_TOKEN: "", TOOLCLAD_SECRET_TOKEN: "t-value" })).toThrowError(
      /^ERR_TOOL_SECRET_MISSING: secret 'token' is not set$/,
    );
  });

  it("a missing secret is reported by its contract name, not by its variable names", () => {
    expect(() => httpSpec({})).toThrowError(/^ERR_TOOL_SECRET_MISSING: secret 'token' is not set$/);
  });
});
