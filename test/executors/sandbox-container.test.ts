// The container tier (docker or podman). It runs for real only where an engine can run
// containers and the test image is already present (tests never pull: they talk to
// loopback only); otherwise this file says so, with the reason, and checks that a
// container-tier call is refused rather than run in a weaker tier.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ContainerOptions, containerUnavailable } from "../../src/executors/index.js";
import { runIn, text, workDir } from "./sandbox-helpers.js";

const engine = ["/usr/bin/podman", "/usr/local/bin/podman", "/usr/bin/docker", "/usr/local/bin/docker"].find(
  (p) => existsSync(p),
);
const container: ContainerOptions = {
  engine: engine ?? "/usr/bin/docker",
  image: process.env.WARDEN_TEST_IMAGE ?? "debian:stable-slim",
};
const why = containerUnavailable(container);
if (why !== undefined) {
  console.warn(`[sandbox-container] the container tier did NOT run here: ${why}`);
}

describe("sandbox tier container", () => {
  // One test, both outcomes asserted: where an engine runs containers the tool runs in one;
  // elsewhere the call is refused with the reason (never run in a weaker tier, never skipped).
  it("runs the tool in a container without network where an engine works; refuses it with the reason elsewhere", async () => {
    if (why !== undefined) {
      const r = await runIn(workDir(), { tier: "container", container }, { argv: ["true"] });
      expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_SANDBOX_UNAVAILABLE" });
      expect(r.ok === false && r.message).toContain("container tier unavailable");
      return;
    }
    const work = workDir();
    const r = await runIn(
      work,
      { tier: "container", container, limits: { processes: 32 } },
      { argv: ["sh", "-c", "echo hi > out.txt; cat out.txt; echo x > /usr/pwned || echo ro"] },
    );
    expect(r.ok && text(r.output.stdout)).toBe("hi\nro\n");
  });

  it("a deployment with no engine configured refuses the container tier", async () => {
    const r = await runIn(workDir(), { tier: "container" }, { argv: ["true"] });
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_SANDBOX_UNAVAILABLE" });
  });
});
