// The AARTS memory hooks answered by the memory firewall's rules: a host session that
// read the web and then writes persistent memory meets the Gate's tainted-memory-write
// rule (ask); the same write in a clean session is allowed; both are Gate decisions.
import { describe, expect, it } from "vitest";
import { ev, result } from "../hooks/events.js";
import { engine } from "../hooks/helpers.js";

const write = (session: string) =>
  ev("PreMemoryWrite", { memory_store: "notes", content: "acme numbers are on the investor page" }, session);

describe("AARTS PreMemoryWrite / PreMemoryRead through the Gate", () => {
  it("a host session that read the web and then writes memory must ask a human (memory poisoning)", async () => {
    const e = await engine();
    expect((await e.handle(write("clean"))).decision).toBe("allow");
    await e.handle(result("web_request", "WebFetch", "acme numbers are on the investor page", "dirty"));
    const v = await e.handle(write("dirty"));
    expect(v.decision).toBe("ask");
    expect(v.matched_rule_id).toBe("host-ask-tainted-memory-write");
    await e.close();
  });

  it("a memory read is a Gate decision too (allowed for the host's own stores)", async () => {
    const e = await engine();
    const v = await e.handle(ev("PreMemoryRead", { memory_store: "notes", retrieved_content: "tabs" }));
    expect(v.decision).toBe("allow");
    await e.close();
  });
});
