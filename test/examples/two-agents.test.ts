// The two-agents example (README, "Two agents") runs end to end: the delegation is
// delivered, the delegate's exfiltration is denied for the inherited taint, the result
// comes back, and inbox theft and replay are refused.
import { describe, expect, it } from "vitest";
import { main } from "../../examples/two-agents.js";

describe("examples/two-agents.ts", () => {
  it("reports every step as the README describes", async () => {
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => out.push(String(s)) > 0) as typeof process.stdout.write;
    let summary: Record<string, unknown>;
    try {
      summary = await main();
    } finally {
      process.stdout.write = write;
    }
    expect(summary).toEqual({
      delegated: true,
      exfiltrationDenied: true,
      quarantinedSenderRefused: true,
      resultDelivered: true,
      inboxTheftRefused: true,
      replayRefused: true,
    });
    expect(out.join("")).toContain("TWO_AGENTS_SUMMARY");
  });
});
