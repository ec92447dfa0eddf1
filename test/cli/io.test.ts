import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJsonFile, readTextFile } from "../../src/cli/io.js";

const dir = mkdtempSync(join(tmpdir(), "warden-cli-io-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

describe("readTextFile", () => {
  it("reads a UTF-8 file of exactly the cap", () => {
    expect(readTextFile(file("at-cap.txt", "héllo"), 6)).toBe("héllo");
  });

  it("counts bytes, not characters: rejects a file one byte over the cap (ERR_CLI_INPUT)", () => {
    const p = file("over-cap.txt", "héllo");
    expect(() => readTextFile(p, 5)).toThrow(
      expect.objectContaining({ code: "ERR_CLI_INPUT", message: `${p} is larger than 5 bytes` }),
    );
  });

  it("maps a missing file to ERR_CLI_INPUT with the errno code only", () => {
    const p = join(dir, "missing.txt");
    expect(() => readTextFile(p, 10)).toThrow(
      expect.objectContaining({ code: "ERR_CLI_INPUT", message: `cannot read ${p}: ENOENT` }),
    );
  });
});

describe("readJsonFile", () => {
  it("parses strict JSON and maps a missing file to ERR_CLI_INPUT", () => {
    expect(readJsonFile(file("a.json", '{"a":1}'))).toEqual({ a: 1 });
    expect(() => readJsonFile(join(dir, "missing.json"))).toThrow(
      expect.objectContaining({ code: "ERR_CLI_INPUT" }),
    );
  });
});
