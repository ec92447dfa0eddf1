// The namespace tier (bubblewrap) under escape attempts: reading secrets outside the binds,
// opening a socket, a fork bomb, writing outside the work directory. Each attack has a
// control in the process tier that succeeds, so a failure here is the namespace's doing.
// bwrap is required: .ci/run installs bubblewrap, and without it the first test fails
// (never a silent pass).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapUnavailable } from "../../src/executors/index.js";
import { runIn, text, workDir } from "./sandbox-helpers.js";

const why = bwrapUnavailable(undefined);
const NS = { tier: "namespace" as const };

let server: Server;
let port = 0;
beforeAll(async () => {
  server = createServer((s) => s.end("hello\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const a = server.address();
  port = typeof a === "object" && a !== null ? a.port : 0;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A readable secret next to (outside) the work directory. */
function secretBeside(work: string): string {
  const dir = join(dirname(work), "outside");
  mkdirSync(dir, { recursive: true });
  const f = join(dir, "shadow");
  writeFileSync(f, "root:$6$hash:19000:0:99999:7:::\n", { mode: 0o644 });
  return f;
}

const connect = (p: number) => ({
  argv: [
    "/usr/bin/python3",
    "-c",
    `import socket; s = socket.create_connection(("127.0.0.1", ${p}), timeout=3); print(s.recv(16))`,
  ],
});

describe("sandbox tier namespace (bubblewrap)", () => {
  it("bwrap works on this machine (required: .ci/run installs bubblewrap)", () => {
    expect(why, `namespace tier unavailable: ${why}`).toBeUndefined();
  });

  it("reading a shadow-like file outside the binds fails", async () => {
    const work = workDir();
    const secret = secretBeside(work);
    const control = await runIn(work, {}, { argv: ["cat", secret] });
    expect(control.ok && text(control.output.stdout)).toContain("root:$6$");
    const r = await runIn(work, NS, { argv: ["cat", secret] });
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_TOOL_FAILED" });
    expect(text(r.ok ? undefined : r.output?.stdout)).toBe("");
    const etc = await runIn(work, NS, { argv: ["cat", "/etc/shadow"] });
    expect(etc.ok).toBe(false);
    expect(text(etc.ok ? undefined : etc.output?.stderr)).toMatch(/No such file/);
  });

  it("opening a socket fails without declared destinations", async () => {
    const work = workDir();
    const control = await runIn(work, {}, connect(port));
    expect(control.ok && text(control.output.stdout)).toContain("hello");
    const r = await runIn(work, NS, connect(port));
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_TOOL_FAILED" });
    expect(text(r.ok ? undefined : r.output?.stderr)).toMatch(/refused|unreachable|Errno/i);
    // A contract that declares destinations gets the network.
    const declared = await runIn(work, NS, connect(port), { sandbox: { network: ["127.0.0.1"] } });
    expect(declared.ok && text(declared.output.stdout)).toContain("hello");
  });

  it("a fork bomb stops at the process limit inside the namespace", async () => {
    const spec = { argv: ["sh", "-c", "for i in $(seq 1 64); do sleep 1 & done; wait"] };
    const r = await runIn(workDir(), { ...NS, limits: { processes: 16 } }, spec);
    expect(r.ok).toBe(false);
    expect(text(r.ok ? undefined : r.output?.stderr)).toMatch(/fork/i);
  });

  it("writing outside the work directory fails; inside it works; /tmp is private", async () => {
    const work = workDir();
    const outside = join(dirname(work), "outside");
    mkdirSync(outside, { recursive: true });
    chmodSync(outside, 0o777);
    const control = await runIn(work, {}, { argv: ["sh", "-c", `echo x > ${outside}/pwned`] });
    expect(control.ok).toBe(true);
    const script = [
      `echo x > ${outside}/pwned2 && echo wrote-outside`,
      "echo x > /usr/pwned && echo wrote-usr",
      "echo kept > result.txt && echo wrote-work",
      "echo t > /tmp/warden-sbx-private && echo wrote-tmp",
    ].join("; ");
    const r = await runIn(work, NS, { argv: ["sh", "-c", script] });
    const out = text(r.ok ? r.output.stdout : r.output?.stdout);
    expect(out).not.toContain("wrote-outside");
    expect(out).not.toContain("wrote-usr");
    expect(out).toContain("wrote-work");
    expect(out).toContain("wrote-tmp");
    expect(readFileSync(join(work, "result.txt"), "utf8")).toBe("kept\n");
    expect(() => readFileSync("/tmp/warden-sbx-private")).toThrow();
  });

  it("a high-risk contract is put in the namespace by the deployment's risk-tier rule", async () => {
    const spec = { argv: ["ls", "/"] };
    const sandbox = { byRiskTier: { high: "namespace" as const } };
    const low = await runIn(workDir(), sandbox, spec, { riskTier: "low" });
    expect(low.ok && text(low.output.stdout)).toContain("etc");
    const high = await runIn(workDir(), sandbox, spec, { riskTier: "high" });
    expect(high.ok && text(high.output.stdout)).not.toContain("etc");
  });

  it("a bind path that is relative or smuggles mount options is refused before anything runs", async () => {
    for (const path of ["relative/dir", "/srv/data:/etc:rw"]) {
      const r = await runIn(workDir(), NS, { argv: ["true"] }, { sandbox: { paths: [{ path }] } });
      expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_PARAMS_INVALID" });
    }
  });

  it("a contract requiring the namespace on a machine without bwrap is refused, not run weaker", async () => {
    const r = await runIn(workDir(), { bwrap: "/nonexistent/bwrap" }, { argv: ["true"] }, { sandbox: NS });
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_SANDBOX_UNAVAILABLE" });
    expect(r.ok === false && r.evidence?.status).toBe("rejected");
  });
});
