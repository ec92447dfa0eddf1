// The upstream vectors directory for the interop tests: GATE schemas and canonical-JSON
// vectors, SchemaPin fixtures, ToolClad examples and scope vectors. Third-party
// material: it is read where it lies and never copied into the repository.
// WARDEN_VECTORS names it; the default is the `shared/vectors` directory beside the checkout.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO_ROOT } from "../helpers/repo.js";

export const VECTORS_DIR = resolve(
  process.env.WARDEN_VECTORS || resolve(REPO_ROOT, "..", "shared", "vectors"),
);

export const MISSING_VECTORS_MESSAGE = `interop vectors directory not found: ${VECTORS_DIR}
Set WARDEN_VECTORS to the directory holding the upstream vectors (gate/, schemapin/, toolclad/),
e.g. WARDEN_VECTORS=/path/to/shared/vectors npm run test:interop`;

export function vectorPath(...parts: string[]): string {
  const p = join(VECTORS_DIR, ...parts);
  if (!existsSync(p)) throw new Error(`missing vector file ${p} (WARDEN_VECTORS=${VECTORS_DIR})`);
  return p;
}

export function readVectorJson(...parts: string[]): unknown {
  return JSON.parse(readFileSync(vectorPath(...parts), "utf8"));
}
