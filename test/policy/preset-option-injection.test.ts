// Issue 17 #5 against the workspace-assistant preset: command lines are text to the
// policy, so the preset itself must keep options that write files or recurse, and paths
// that name credentials, out of its auto-allowed commands.
import { describe, expect, it } from "vitest";
import { loadPolicyBundle } from "../../src/policy/index.js";
import { mkInput } from "./helpers.js";

const wa = loadPolicyBundle([new URL("../../policies/workspace-assistant.yaml", import.meta.url).pathname]);
const shell = (command: string) => wa.evaluate(mkInput("shell", "exec", { command }));
const expectDecision = (command: string, decision: string, rule: string) => {
  const r = shell(command);
  expect(r.decision, command).toBe(decision);
  expect(r.matchedRules[0]?.id, command).toBe(rule);
};

describe("workspace-assistant preset: option injection and secrets (issue 17 #5)", () => {
  it("a path argument '--output=/tmp/x' cannot become an unattended git option", () => {
    for (const c of [
      "git log --output=/tmp/x",
      "git log --output x",
      "git diff --output=notes.txt",
      "git log --outp=x",
      "git show --ext-diff HEAD",
      "git diff --textconv",
    ]) {
      expectDecision(c, "step_up", "wa-approve-risky-options");
    }
  });

  it("the workspace preset cannot cat secrets/api_key.txt", () => {
    for (const c of [
      "cat secrets/api_key.txt",
      "cat ./secrets/api_key.txt",
      "head -c 100 config/secrets/db.txt",
      "grep -n KEY secret.txt",
      "cat credentials",
      "cat .env",
      "tail app/.aws/config",
    ]) {
      expectDecision(c, "deny", "wa-deny-sensitive-shell");
    }
  });

  it("a recursive grep that would read secrets/ needs a human", () => {
    for (const c of ["grep -r KEY .", "grep -Rn KEY src", "grep -nr KEY .", "grep -d recurse KEY ."]) {
      expectDecision(c, "step_up", "wa-approve-risky-options");
    }
  });

  it("a short option with an attached path cannot read outside the workspace", () => {
    expectDecision("grep -f/etc/shadow src/a.ts", "step_up", "wa-approve-risky-options");
  });

  it("git's own config cannot be written to make git run a program", () => {
    const r = wa.evaluate(mkInput("file", "write", { path: ".git/config" }));
    expect(r.decision).toBe("deny");
    expect(r.matchedRules[0]?.id).toBe("wa-deny-git-internals-write");
    expect(wa.evaluate(mkInput("file", "write", { path: "src/.git/hooks/post-checkout" })).decision).toBe(
      "deny",
    );
  });

  it("plain read-only commands with short flags and read-only long options still run", () => {
    for (const c of [
      "git status",
      "git log --oneline",
      "git diff --stat",
      "git log -5 -- src",
      "grep -n TODO src/a.ts",
      "head -5 README.md",
      "ls -la",
    ]) {
      expectDecision(c, "allow", "wa-allow-safe-commands");
    }
  });
});
