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

  const more = defineOptions({
    db: { flags: "--db <file>", description: "x", kind: "value", required: true },
    principal: { flags: "--principal <id>", description: "x", kind: "value", default: "agent" },
    role: { flags: "--role <role>", description: "x", kind: "repeat" },
  });

  function parse(argv: string[]): OptionsOf<typeof more> | undefined {
    let seen: OptionsOf<typeof more> | undefined;
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {} });
    addOptions(program.command("c").exitOverride(), more).action((o: OptionsOf<typeof more>) => {
      seen = o;
    });
    program.parse(["node", "w", "c", ...argv]);
    return seen;
  }

  it("a repeatable option collects every occurrence, a default fills an absent value", () => {
    const o = parse(["--db", "j.db", "--role", "a", "--role", "b"]);
    expect(o).toEqual({ db: "j.db", principal: "agent", role: ["a", "b"] });
    // the type says these are present (no `?`): this line would not compile otherwise
    const typed: { db: string; principal: string; role: string[] } | undefined = o;
    expect(parse(["--db", "x"])?.role).toEqual([]);
    expect(typed).toBeDefined();
  });

  it("a required option that is absent stops the command before its action", () => {
    expect(() => parse(["--role", "a"])).toThrow(/--db/);
  });

  it("a repeatable spec on a variadic flag, or a default on a flag, is refused", () => {
    const variadic = { role: { flags: "--role <r...>", description: "x", kind: "repeat" as const } };
    expect(() => addOptions(new Command("c"), variadic)).toThrow(/does not match/);
    const flagDefault = { json: { flags: "--json", description: "x", kind: "flag" as const, default: "1" } };
    expect(() => addOptions(new Command("c"), flagDefault)).toThrow(/does not match/);
  });
});
