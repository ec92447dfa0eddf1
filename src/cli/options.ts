// Command options declared once: each command lists its options as specs, registers
// them with `addOptions`, and takes the type of its parsed options from the same specs
// (`OptionsOf`), so a flag and the field that holds its value cannot drift apart.
// `addOptions` checks at registration that a spec's key is commander's name for its long
// flag and that its kind matches the flag's syntax (a mistake fails every run of the
// command, and the CLI tests).
import type { Command } from "commander";

/**
 * "flag": `--x` → boolean; "value": `--x <v>` → string; "values": `--x <v...>` → string[].
 * A "value" spec with `repeatable: true` collects `--x a --x b` into string[] (unlike a
 * variadic option it never swallows the positional arguments that follow it).
 */
export type OptionKind = "flag" | "value" | "values";

export interface OptionSpec {
  flags: string;
  description: string;
  kind: OptionKind;
  repeatable?: true;
}

export type OptionsOf<S extends Record<string, OptionSpec>> = {
  [K in keyof S]?: S[K]["kind"] extends "flag"
    ? boolean
    : S[K]["kind"] extends "values"
      ? string[]
      : S[K] extends { repeatable: true }
        ? string[]
        : string;
};

/** Declares the specs with their literal kinds kept (for OptionsOf). */
export function defineOptions<const S extends Record<string, OptionSpec>>(specs: S): S {
  return specs;
}

function camel(long: string): string {
  return long.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function kindOf(flags: string): OptionKind {
  if (/<[^>]+\.\.\.>/.test(flags)) return "values";
  return /<[^>]+>/.test(flags) ? "value" : "flag";
}

export function addOptions(command: Command, specs: Record<string, OptionSpec>): Command {
  for (const [key, spec] of Object.entries(specs)) {
    const long = /--[a-z][a-z0-9-]*/.exec(spec.flags)?.[0];
    if (long === undefined || camel(long) !== key || kindOf(spec.flags) !== spec.kind) {
      throw new Error(`option spec ${key} does not match its flags "${spec.flags}"`);
    }
    if (spec.repeatable === true) {
      if (spec.kind !== "value") throw new Error(`option spec ${key}: only a value option can repeat`);
      command.option(spec.flags, spec.description, (v: string, prev: string[] | undefined) => [
        ...(prev ?? []),
        v,
      ]);
    } else command.option(spec.flags, spec.description);
  }
  return command;
}
