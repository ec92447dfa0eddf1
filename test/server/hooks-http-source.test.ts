// Source trust on the sidecar's AARTS transport: `hooks.sourceTrust` applies to every host's
// engine and the pin store (`hooks.sourcePins`) is shared, so a rug pull first seen by one
// host is caught for another.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostToolsPolicyPath } from "../../src/hooks/index.js";
import { hashToken } from "../../src/server/index.js";
import { ev } from "../hooks/events.js";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const HOSTS = ["token-host-one-0123456789", "token-host-two-0123456789"];

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({
    requireContract: false,
    config: {
      policies: [hostToolsPolicyPath()],
      hooks: {
        maxEngines: 4,
        sourceTrust: { trusted: [{ kind: "mcp-server", id: "github" }], unknown: "deny" },
        sourcePins: "source-pins.json",
      },
      gate: {
        tenant: "test",
        environment: "test",
        requireContract: false,
        principals: HOSTS.map((_, i) => ({ id: `host-${i}`, roles: ["host"] })),
      },
      auth: {
        principals: HOSTS.map((t, i) => ({ id: `host-${i}`, tokenSha256: hashToken(t) })),
        approvers: [{ id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) }],
      },
    },
  });
  for (const token of HOSTS) {
    expect((await s.call("/v1/hooks/handshake", { token, body: { aarts_version: "1" } })).status).toBe(200);
  }
});
afterAll(() => s.stop());

const connect = (token: string, server_id: string, server_command: string, source = "project") =>
  s.call("/v1/hooks/events", {
    token,
    body: ev("PreMCPConnect", { source, server_id, transport: "stdio", server_command }),
  });

describe("source trust over HTTP", () => {
  it("a look-alike server name is denied and an unknown project server is denied (unknown: deny)", async () => {
    const look = await connect(HOSTS[0] as string, "githuƅ", "npx x");
    expect(look.body).toMatchObject({ decision: "deny", matched_rule_id: "aarts-source-lookalike" });
    const unknown = await connect(HOSTS[0] as string, "stranger", "npx stranger-mcp");
    expect(unknown.body).toMatchObject({ decision: "deny", matched_rule_id: "aarts-source-unknown" });
  });

  it("a rug pull first pinned by one host is denied to another host", async () => {
    expect((await connect(HOSTS[0] as string, "github", "npx gh-mcp@1")).body.decision).toBe("allow");
    const other = await connect(HOSTS[1] as string, "github", "npx gh-mcp@6");
    expect(other.body).toMatchObject({ decision: "deny", matched_rule_id: "aarts-source-changed" });
    expect(existsSync(s.server.runtime.loaded.config.hooks.sourcePins as string)).toBe(true);
  });
});
