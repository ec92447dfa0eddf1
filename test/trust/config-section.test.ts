// The `apae:` section as `warden run --config` reads it (the sidecar's is in test/server/apae.test.ts).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCliGateConfig } from "../../src/cli/gate-config.js";
import { hasErrorCode } from "../../src/contracts/index.js";

function file(text: string): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "warden-apae-cfg-"));
  writeFileSync(join(dir, "gate.yaml"), text);
  return { dir, path: join(dir, "gate.yaml") };
}

describe("warden run --config apae:", () => {
  it("turns APAE on with its settings and a store relative to the file", () => {
    const f = file(
      "principals:\n  - { id: agent-1, roles: [agent] }\napae:\n  settings: { quarantine_floor: 0.1 }\n  store: t.db\n",
    );
    const c = loadCliGateConfig(f.path);
    expect(c.apae).toEqual({
      settings: expect.objectContaining({ quarantine_floor: 0.1 }),
      store: join(f.dir, "t.db"),
    });
  });

  it("a file without apae: leaves it off", () => {
    expect(
      loadCliGateConfig(file("principals:\n  - { id: agent-1, roles: [agent] }\n").path).apae,
    ).toBeUndefined();
  });

  it("a misspelt setting is refused with ERR_TRUST_CONFIG_INVALID", () => {
    const f = file(
      "principals:\n  - { id: agent-1, roles: [agent] }\napae:\n  settings: { quarantine_flor: 0.1 }\n",
    );
    try {
      loadCliGateConfig(f.path);
      expect.unreachable("accepted a misspelt key");
    } catch (err) {
      expect(hasErrorCode(err, "ERR_TRUST_CONFIG_INVALID")).toBe(true);
      expect((err as Error).message).toMatch(/quarantine_flor|settings/);
    }
  });
});
