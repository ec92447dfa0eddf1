// Locates ../shared (the external vectors and specs) beside the checkout.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, "..", "..");
export const SHARED_DIR = resolve(REPO_ROOT, "..", "shared");

export function sharedPath(...parts: string[]): string {
  const p = join(SHARED_DIR, ...parts);
  if (!existsSync(p)) throw new Error(`missing shared vector ${p}: ../shared must sit beside the checkout`);
  return p;
}

export function readSharedJson(...parts: string[]): unknown {
  return JSON.parse(readFileSync(sharedPath(...parts), "utf8"));
}
