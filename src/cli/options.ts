// Command options declared once: each command lists its options as specs, registers
// them with `addOptions`, and takes the type of its parsed options from the same specs
// (`OptionsOf`), so a flag and the field that holds its value cannot drift apart.
// `addOptions` checks at registration that a spec's key is commander's name for its long
// flag and that its kind matches the flag's syntax (a mistake fails every run of the
// command, and the CLI tests).
import type { Command } from "commander";

/**
 * "flag": `--x` → boolean; "value": `--x <v>` → string; "values": `--x <v...>` → string[];
 * "repeat": `--x <v>` given any number of times → string[] (empty when absent).
 */
export type OptionKind = "flag" | "value" | "values" | "repeat";

export interface OptionSpec {
  flags: string;
  description: string;
  kind: OptionKind;
  /** commander refuses the command when the option is absent (`requiredOption`). */
  required?: true;
  /** the value when the option is absent ("value" options only). */
  default?: string;
}

type ValueOf<S extends OptionSpec> = S["kind"] extends "flag"
  ? boolean
  : S["kind"] extends "values" | "repeat"
    ? string[]
    : string;

/** Always present after parsing: required, defaulted, or repeatable (defaults to []). */
type Present<S extends OptionSpec> = S extends { required: true }
  ? true
  : S extends { default: string }
    ? true
    : S["kind"] extends "repeat"
      ? true
      : false;

type Simplify<T> = { [K in keyof T]: T[K] };

export type OptionsOf<S extends Record<string, OptionSpec>> = Simplify<
  { [K in keyof S as Present<S[K]> extends true ? K : never]: ValueOf<S[K]> } & {
    [K in keyof S as Present<S[K]> extends true ? never : K]?: ValueOf<S[K]>;
  }
>;

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

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function checkSpec(key: string, spec: OptionSpec): void {
  const long = /--[a-z][a-z0-9-]*/.exec(spec.flags)?.[0];
  const syntax = kindOf(spec.flags);
  const kindOk = spec.kind === "repeat" ? syntax === "value" : syntax === spec.kind;
  const defaultOk = spec.default === undefined || spec.kind === "value";
  if (long === undefined || camel(long) !== key || !kindOk || !defaultOk) {
    throw new Error(`option spec ${key} does not match its flags "${spec.flags}"`);
  }
}

export function addOptions(command: Command, specs: Record<string, OptionSpec>): Command {
  for (const [key, spec] of Object.entries(specs)) {
    checkSpec(key, spec);
    const add = (spec.required ? command.requiredOption : command.option).bind(command);
    if (spec.kind === "repeat") add(spec.flags, spec.description, collect, []);
    else if (spec.default !== undefined) add(spec.flags, spec.description, spec.default);
    else add(spec.flags, spec.description);
  }
  return command;
}
