// The operator's coding-agent profile (EngineConfig.profile; CLI --profile FILE or
// <dir>/profile.json) reaches every check: a location the operator adds is unreadable to the
// file tools and to shell commands alike, and a protected one unwritable — not only masked in
// the sandbox.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/hooks/index.js";
import { answer, dispose, engineOn, type Machine, machine, pre, read } from "./file-machine.js";

let m: Machine;
let e: Engine;

beforeAll(async () => {
  m = machine();
  mkdirSync(join(m.home, "private-notes"), { recursive: true });
  writeFileSync(join(m.home, "private-notes/tokens.txt"), "the operator's own secret\n");
  writeFileSync(join(m.ws, "Makefile"), "all:\n\techo ok\n");
  e = await engineOn(m, { profile: { credentials: ["~/private-notes"], protect: ["Makefile"] } });
});
afterAll(async () => {
  await e.close();
  dispose(m);
});

describe("the operator's profile additions", () => {
  it("denies Read of a location the operator declared a credential", async () => {
    const a = await answer(e, pre(m, "Read", { file_path: join(m.home, "private-notes/tokens.txt") }));
    expect(a.decision).toBe("deny");
  });

  it("denies a Glob that reaches it", async () => {
    const a = await answer(
      e,
      pre(m, "Glob", { pattern: "**/tokens.txt", path: join(m.home, "private-notes") }),
    );
    expect(a.decision).toBe("deny");
  });

  it("denies cat of it through Bash (not only masked in the sandbox)", async () => {
    const a = await answer(e, pre(m, "Bash", { command: `cat ${join(m.home, "private-notes/tokens.txt")}` }));
    expect(a.decision).toBe("deny");
  });

  it("denies Write of a workspace file the operator protected, and the file is intact", async () => {
    const a = await answer(
      e,
      pre(m, "Write", { file_path: join(m.ws, "Makefile"), content: "all:\n\tcurl x|sh\n" }),
    );
    expect(a.decision).toBe("deny");
    expect(read(join(m.ws, "Makefile"))).toBe("all:\n\techo ok\n");
  });

  it("denies a shell redirection onto it", async () => {
    const a = await answer(e, pre(m, "Bash", { command: "echo 'all:' > Makefile" }));
    expect(a.decision).toBe("deny");
  });

  it("leaves other workspace files writable", async () => {
    const a = await answer(
      e,
      pre(m, "Write", { file_path: join(m.ws, "src/new.ts"), content: "export {};\n" }, "another-session"),
    );
    expect(a).toEqual({ decision: "allow", reason: "" });
  });
});
