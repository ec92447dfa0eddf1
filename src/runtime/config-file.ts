// Reading an entry point's configuration file: one size cap, one YAML parser setting (no
// custom tags, unique keys, bounded aliases) for every entry point. The caller passes its
// own coded error so each entry point keeps its error family.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Reads a YAML (or JSON) configuration file into plain data; `fail` builds the coded error. */
export function readConfigFile(path: string, fail: (message: string) => Error): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw fail(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (text.length > MAX_CONFIG_BYTES) throw fail(`${path} is larger than 1 MiB`);
  try {
    return parseYaml(text, { maxAliasCount: 100, uniqueKeys: true, customTags: [] });
  } catch (err) {
    throw fail(`${path}: ${(err as Error).message.split("\n")[0]}`);
  }
}
