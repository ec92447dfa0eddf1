// The real browser for the console's browser tests and bench, arriving through npm: the
// Chromium build inside the @sparticuz/chromium devDependency (Linux x64; its brotli files
// are inflated once into the temp directory, with the NSS libraries it links against, so a
// machine with Node and nothing else runs it). WARDEN_CHROMIUM names another executable;
// on other platforms a system Chromium is used. Nothing is downloaded. A browser that cannot be
// found fails the caller with what to do.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { brotliDecompressSync } from "node:zlib";

export interface ChromiumLaunch {
  executablePath: string;
  /** Extra environment for the browser process (the bundled libraries' directory). */
  env: Record<string, string>;
}

const SYSTEM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"];
const HOW =
  "the console's browser tests need Chromium: run `npm install` in the clone (the devDependency " +
  "@sparticuz/chromium carries a Linux x64 build), or set WARDEN_CHROMIUM to a Chromium executable";

/** The regular files of an uncompressed tar archive (ustar), by name. */
function untar(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    const name = header.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    if (name === "") break;
    const size = Number.parseInt(header.subarray(124, 136).toString("utf8").replace(/\0.*$/s, "").trim(), 8);
    const type = String.fromCharCode(header[156] ?? 48);
    if (type === "0" || type === "\0") files.set(name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Inflates the package's bundled libraries (lib/*.so) once into DIR/lib. */
function bundledLibraries(bin: string, dir: string): string {
  const lib = join(dir, "lib");
  if (existsSync(join(lib, ".complete"))) return lib;
  const archive = join(bin, "al2023.tar.br");
  if (!existsSync(archive)) return lib;
  mkdirSync(lib, { recursive: true });
  for (const [name, bytes] of untar(brotliDecompressSync(readFileSync(archive)))) {
    if (!name.startsWith("lib/") || name.includes("..")) continue;
    const tmp = join(dir, `${name}.${process.pid}`);
    writeFileSync(tmp, bytes, { mode: 0o755 });
    renameSync(tmp, join(dir, name));
  }
  writeFileSync(join(lib, ".complete"), "");
  return lib;
}

/** The folder of the installed @sparticuz/chromium (its exports do not include package.json). */
function npmPackageDir(): string | undefined {
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium"));
  } catch {
    return undefined;
  }
  while (!existsSync(join(dir, "package.json")) || !existsSync(join(dir, "bin"))) {
    if (dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
  return dir;
}

async function npmChromium(): Promise<ChromiumLaunch> {
  const root = npmPackageDir();
  if (root === undefined) throw new Error(HOW);
  const mod = (await import("@sparticuz/chromium")) as {
    default: { executablePath(input?: string): Promise<string> };
  };
  const bin = join(root, "bin");
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string })
    .version;
  const executablePath = await mod.default.executablePath(bin);
  const lib = bundledLibraries(bin, join(tmpdir(), `warden-chromium-${version}`));
  const prior = process.env.LD_LIBRARY_PATH;
  return { executablePath, env: { LD_LIBRARY_PATH: prior ? `${lib}:${prior}` : lib } };
}

/** Where the browser comes from: WARDEN_CHROMIUM, the npm build, or a system Chromium. */
export async function findChromium(): Promise<ChromiumLaunch> {
  const named = process.env.WARDEN_CHROMIUM;
  if (named !== undefined && named !== "") {
    if (!existsSync(named)) throw new Error(`WARDEN_CHROMIUM=${named} does not exist; ${HOW}`);
    return { executablePath: named, env: {} };
  }
  // Linux x64: the npm build, required (no silent fallback to whatever the machine has).
  if (process.platform === "linux" && process.arch === "x64") return npmChromium();
  const system = SYSTEM.find((p) => existsSync(p));
  if (system === undefined) throw new Error(HOW);
  return { executablePath: system, env: {} };
}
