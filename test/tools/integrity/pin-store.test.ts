// The TOFU pin store on disk: atomic replacement, permissions, SchemaPin's flat format,
// and explicit re-pinning.
import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hasErrorCode, type WardenErrorCode } from "../../../src/contracts/index.js";
import { PinStore } from "../../../src/tools/integrity/index.js";
import { tempDir } from "./helpers.js";

const FP1 = `sha256:${"1".repeat(64)}`;
const FP2 = `sha256:${"2".repeat(64)}`;

function codeOf(fn: () => unknown): WardenErrorCode | string | undefined {
  try {
    fn();
  } catch (err) {
    return hasErrorCode(err, "ERR_INTEGRITY_PIN_STORE") || hasErrorCode(err, "ERR_INTEGRITY_KEY_PIN_MISMATCH")
      ? err.code
      : String(err);
  }
  return undefined;
}

describe("PinStore", () => {
  it("a missing file opens empty and the first pin creates it (0644, no temp files left)", () => {
    const dir = tempDir();
    const path = join(dir, "pins.json");
    const store = PinStore.open(path);
    expect(store.entries()).toEqual([]);
    expect(existsSync(path)).toBe(false);
    store.pin("tool", "example.com", FP1, { now: new Date("2026-01-02T03:04:05Z") });
    expect(statSync(path).mode & 0o022).toBe(0);
    expect(readdirSync(dir)).toEqual(["pins.json"]);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      warden_pin_store: 1,
      pins: [
        { tool_id: "tool", domain: "example.com", fingerprint: FP1, pinned_at: "2026-01-02T03:04:05.000Z" },
      ],
    });
    const reopened = PinStore.open(path);
    expect(reopened.check("tool", "example.com", FP1)).toBe("pinned");
    expect(reopened.check("tool", "example.com", FP2)).toBe("changed");
    expect(reopened.check("other", "example.com", FP2)).toBe("first_use");
  });

  it("replacing a pin requires an explicit re-pin", () => {
    const path = join(tempDir(), "pins.json");
    const store = PinStore.open(path);
    store.pin("tool", "example.com", FP1);
    expect(codeOf(() => store.pin("tool", "example.com", FP2))).toBe("ERR_INTEGRITY_KEY_PIN_MISMATCH");
    expect(PinStore.open(path).get("tool", "example.com")?.fingerprint).toBe(FP1);
    store.pin("tool", "example.com", FP2, { replace: true });
    expect(PinStore.open(path).get("tool", "example.com")?.fingerprint).toBe(FP2);
  });

  it("saving replaces a symlinked store path instead of writing through the link", () => {
    const dir = tempDir();
    const target = join(dir, "elsewhere.json");
    PinStore.open(target).pin("tool", "example.com", FP1);
    const before = readFileSync(target, "utf8");
    const path = join(dir, "pins.json");
    symlinkSync(target, path);
    PinStore.open(path).pin("other", "example.com", FP2);
    expect(readFileSync(target, "utf8")).toBe(before);
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(PinStore.open(path).entries()).toHaveLength(2);
  });

  it("an in-memory store cannot be saved", () => {
    expect(() => PinStore.inMemory().save()).toThrow(TypeError);
  });

  it("refuses a store writable by group or others", () => {
    const path = join(tempDir(), "pins.json");
    PinStore.open(path).pin("tool", "example.com", FP1);
    chmodSync(path, 0o666);
    expect(codeOf(() => PinStore.open(path))).toBe("ERR_INTEGRITY_PIN_STORE");
    chmodSync(path, 0o644);
    expect(PinStore.open(path).entries()).toHaveLength(1);
  });

  it("reads SchemaPin's KeyPinStore JSON ({tool@domain: fingerprint})", () => {
    const path = join(tempDir(), "pins.json");
    writeFileSync(path, JSON.stringify({ "calc@example.com": FP1, "a@b@c.example": FP2 }), { mode: 0o644 });
    const store = PinStore.open(path);
    expect(store.get("calc", "example.com")?.fingerprint).toBe(FP1);
    expect(store.get("a@b", "c.example")?.fingerprint).toBe(FP2);
  });

  it.each([
    ["not JSON", "{"],
    ["duplicate keys", `{"warden_pin_store":1,"pins":[],"pins":[]}`],
    ["unknown format", `{"version":2}`],
    ["bad fingerprint", `{"x@y": "sha256:zz"}`],
    ["flat key without domain", `{"tool": "${FP1}"}`],
    [
      "duplicate pin",
      JSON.stringify({
        warden_pin_store: 1,
        pins: [
          { tool_id: "t", domain: "d", fingerprint: FP1, pinned_at: "" },
          { tool_id: "t", domain: "d", fingerprint: FP2, pinned_at: "" },
        ],
      }),
    ],
  ])("a malformed store (%s) → ERR_INTEGRITY_PIN_STORE", (_l, text) => {
    const path = join(tempDir(), "pins.json");
    writeFileSync(path, text, { mode: 0o644 });
    expect(codeOf(() => PinStore.open(path))).toBe("ERR_INTEGRITY_PIN_STORE");
  });

  it("a directory at the store path → ERR_INTEGRITY_PIN_STORE", () => {
    expect(codeOf(() => PinStore.open(tempDir()))).toBe("ERR_INTEGRITY_PIN_STORE");
  });

  it("(tool, domain) pairs cannot collide through '@'", () => {
    const store = PinStore.inMemory();
    store.pin("a@b", "c.example", FP1);
    expect(store.check("a", "b@c.example", FP2)).toBe("first_use");
    expect(codeOf(() => store.pin("a", "b@c.example", FP2))).toBe("ERR_INTEGRITY_PIN_STORE");
  });

  it("refuses malformed fingerprints and names", () => {
    const store = PinStore.inMemory();
    expect(codeOf(() => store.pin("t", "example.com", "sha256:abc"))).toBe("ERR_INTEGRITY_PIN_STORE");
    expect(codeOf(() => store.pin("", "example.com", FP1))).toBe("ERR_INTEGRITY_PIN_STORE");
    expect(codeOf(() => store.pin("t", "bad domain", FP1))).toBe("ERR_INTEGRITY_PIN_STORE");
  });

  it("unpin removes and persists", () => {
    const path = join(tempDir(), "pins.json");
    const store = PinStore.open(path);
    store.pin("t", "example.com", FP1);
    expect(store.unpin("t", "example.com")).toBe(true);
    expect(store.unpin("t", "example.com")).toBe(false);
    expect(PinStore.open(path).entries()).toEqual([]);
  });

  it("a shared store's rows seed an in-memory store; a malformed or duplicate row is refused, not skipped", () => {
    const row = { toolId: "tool", domain: "example.com", fingerprint: FP1, pinnedAt: "2026-01-02T03:04:05Z" };
    const seeded = PinStore.fromEntries([row]);
    expect(seeded.path).toBeUndefined();
    expect(seeded.check("tool", "example.com", FP2)).toBe("changed");
    expect(seeded.get("tool", "example.com")).toEqual(row);
    expect(codeOf(() => PinStore.fromEntries([row, { ...row, fingerprint: FP2 }]))).toBe(
      "ERR_INTEGRITY_PIN_STORE",
    );
    expect(codeOf(() => PinStore.fromEntries([{ ...row, fingerprint: "sha256:XYZ" }]))).toBe(
      "ERR_INTEGRITY_PIN_STORE",
    );
    expect(codeOf(() => PinStore.fromEntries([{ ...row, domain: "a b" }]))).toBe("ERR_INTEGRITY_PIN_STORE");
  });
});
