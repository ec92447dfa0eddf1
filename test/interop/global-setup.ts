// Fails the whole interop run at once, with one message, when the vectors are missing:
// an interop test never skips silently.
import { existsSync, statSync } from "node:fs";
import { MISSING_VECTORS_MESSAGE, VECTORS_DIR } from "./vectors.js";

export default function setup(): void {
  if (!existsSync(VECTORS_DIR) || !statSync(VECTORS_DIR).isDirectory()) {
    process.stderr.write(`\n${MISSING_VECTORS_MESSAGE}\n\n`);
    process.exit(1);
  }
}
