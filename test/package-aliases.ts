// The package's own name, resolved to the source in the clone: the examples import
// `warden-runtime/…` as a user's project does (tsconfig.json maps the same names for tsc).
// Each subpath export of package.json (`./x` → `./dist/src/x.js`) becomes `src/x.ts`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface PackageJson {
  name: string;
  exports: Record<string, { default: string }>;
}

const root = fileURLToPath(new URL("..", import.meta.url));

export function packageAliases(): { find: RegExp; replacement: string }[] {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as PackageJson;
  return Object.entries(pkg.exports).map(([sub, target]) => {
    const name = sub === "." ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
    const source = target.default.replace(/^\.\/dist\/src\//, "src/").replace(/\.js$/, ".ts");
    return { find: new RegExp(`^${name.replace(/[/.-]/g, "\\$&")}$`), replacement: `${root}${source}` };
  });
}
