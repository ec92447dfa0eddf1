// The coding-agent profile: one list of credential locations and protected paths, placed on
// a machine. Attacks: traversal and look-alike names must not slip a credential location or a
// hook-settings file past the checks; template files are not secrets.
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  codingProfile,
  egressAllowed,
  isCredentialName,
  isCredentialPath,
  isProtectedPath,
  isWithin,
} from "../../src/hooks/index.js";

const home = "/home/dev";
const ws = "/home/dev/proj";
const profile = codingProfile({ home, workspace: ws, stateDirs: ["/home/dev/.warden/hooks"] });

describe("coding-agent profile", () => {
  it("treats every home credential location as unreadable, files below it too", () => {
    for (const p of [".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".npmrc", ".netrc"]) {
      expect(isCredentialPath(profile, join(home, p))).toBe(true);
    }
  });

  it("treats the workspace .env and private keys anywhere as credentials, templates not", () => {
    expect(isCredentialPath(profile, join(ws, ".env"))).toBe(true);
    expect(isCredentialPath(profile, join(ws, ".env.production"))).toBe(true);
    expect(isCredentialPath(profile, join(ws, "deploy/id_rsa"))).toBe(true);
    expect(isCredentialPath(profile, join(ws, ".env.example"))).toBe(false);
    expect(isCredentialPath(profile, join(ws, "src/auth/credentials.ts"))).toBe(false);
    expect(isCredentialPath(profile, join(ws, "deploy/id_rsa.pub"))).toBe(false);
  });

  it("protects every host's hook settings, git hooks and config, and Warden's state", () => {
    for (const p of [
      join(ws, ".claude/settings.local.json"),
      join(ws, ".claude/settings.json"),
      join(ws, ".cursor/hooks.json"),
      join(ws, ".codex/config.toml"),
      join(ws, ".github/hooks/warden.json"),
      join(ws, ".gemini/settings.json"),
      join(ws, ".git/hooks/pre-commit"),
      join(ws, ".git/config"),
      join(home, ".warden/hooks/state.json"),
      join(home, ".bashrc"),
      join(home, ".gitconfig"),
    ]) {
      expect(isProtectedPath(profile, p), p).toBe(true);
    }
    expect(isProtectedPath(profile, join(ws, "src/index.ts"))).toBe(false);
    expect(isProtectedPath(profile, join(ws, ".claude/commands/review.md"))).toBe(true);
    expect(isProtectedPath(profile, join(ws, ".claude/notes.md"))).toBe(false);
  });

  it("does not take a sibling with a common prefix for a location below (.sshx is not .ssh)", () => {
    expect(isWithin("/home/dev/.sshx", "/home/dev/.ssh")).toBe(false);
    expect(isWithin("/home/dev/..ssh", "/home/dev")).toBe(true);
    expect(isCredentialPath(profile, join(home, ".sshx/notes"))).toBe(false);
  });

  it("places the operator's additions (~, absolute, workspace-relative)", () => {
    const p = codingProfile(
      { home, workspace: ws, stateDirs: [] },
      { credentials: ["~/.config/acme", "/etc/acme/key", "secrets"], protect: ["Makefile"] },
    );
    expect(isCredentialPath(p, "/home/dev/.config/acme/token")).toBe(true);
    expect(isCredentialPath(p, "/etc/acme/key")).toBe(true);
    expect(isCredentialPath(p, join(ws, "secrets/a"))).toBe(true);
    expect(isProtectedPath(p, join(ws, "Makefile"))).toBe(true);
  });

  it("refuses an unknown profile key (strict format)", () => {
    expect(() => codingProfile({ home, workspace: ws, stateDirs: [] }, { nope: 1 } as never)).toThrow();
  });

  it("allows egress only to listed hosts and *.suffix subdomains, never a look-alike suffix", () => {
    const p = codingProfile({ home, workspace: ws, stateDirs: [] }, { egress: ["*.example.com"] });
    expect(egressAllowed(p, "registry.npmjs.org")).toBe(true);
    expect(egressAllowed(p, "REGISTRY.NPMJS.ORG.")).toBe(true);
    expect(egressAllowed(p, "api.example.com")).toBe(true);
    expect(egressAllowed(p, "evilexample.com")).toBe(false);
    expect(egressAllowed(p, "registry.npmjs.org.attacker.example")).toBe(false);
  });

  it("property: no path below a credential location is ever readable, however it is written", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z0-9._-]{1,8}$/), { maxLength: 4 }), (segs) => {
        const clean = segs.filter((s) => s !== "." && s !== "..");
        expect(isCredentialPath(profile, join(home, ".ssh", ...clean))).toBe(true);
      }),
    );
  });

  it("names: only .env and .env.<not a template> and private key names", () => {
    expect(isCredentialName(".env.local")).toBe(true);
    expect(isCredentialName(".env.EXAMPLE")).toBe(false);
    expect(isCredentialName("env")).toBe(false);
    expect(isCredentialName("id_ed25519_sk")).toBe(true);
  });
});
