#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build`.
import { main } from "../dist/src/cli/main.js";

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`warden: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
