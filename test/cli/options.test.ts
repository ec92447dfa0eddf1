// Options declared once: a spec whose key or kind disagrees with its flags is refused at
// registration, so the parsed-options type cannot drift from what commander fills in.
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addOptions, defineOptions, type OptionsOf } from "../../src/cli/options.js";

describe("command options from one declaration", () => {
  const specs = defineOptions({
    initKeys: { flags: "--init-keys", description: "x", kind: "flag" },
    port: { flags: "--port <port>", description: "x", kind: "value" },
    policy: { flags: "--policy <file...>", description: "x", kind: "values" },
  });

  it("parses into the declared shape", () => {
    let seen: OptionsOf<typeof specs> | undefined;
    const program = new Command().exitOverride();
    addOptions(program.command("c"), specs).action((o: OptionsOf<typeof specs>) => {
      seen = o;
    });
    program.parse(["node", "w", "c", "--init-keys", "--port", "8", "--policy", "a", "b"]);
    expect(seen).toEqual({ initKeys: true, port: "8", policy: ["a", "b"] });
  });

  it("a key that is not the flag's name is refused", () => {
    const bad = { initkeys: { flags: "--init-keys", description: "x", kind: "flag" as const } };
    expect(() => addOptions(new Command("c"), bad)).toThrow(/does not match/);
  });

  it("a kind that does not match the flag's syntax is refused", () => {
    const bad = { port: { flags: "--port <port>", description: "x", kind: "flag" as const } };
    expect(() => addOptions(new Command("c"), bad)).toThrow(/does not match/);
    const many = { policy: { flags: "--policy <file...>", description: "x", kind: "value" as const } };
    expect(() => addOptions(new Command("c"), many)).toThrow(/does not match/);
  });
});
