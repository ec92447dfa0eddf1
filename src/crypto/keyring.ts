// A keyring maps key ids (RFC 7638 thumbprints) to public keys, for verifiers that
// accept several keys over time (journal key rotation, contract publishers).
import type { KeyObject } from "node:crypto";
import { keyIdOf, toPublicKey } from "./keys.js";

export class Keyring {
  readonly #keys = new Map<string, KeyObject>();

  constructor(keys: Iterable<KeyObject> = []) {
    for (const k of keys) this.add(k);
  }

  /** Adds a key (a private key contributes its public half); returns its key id. */
  add(key: KeyObject): string {
    const pub = toPublicKey(key);
    const id = keyIdOf(pub);
    this.#keys.set(id, pub);
    return id;
  }

  get(keyId: string): KeyObject | undefined {
    return this.#keys.get(keyId);
  }

  has(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  get size(): number {
    return this.#keys.size;
  }

  ids(): string[] {
    return [...this.#keys.keys()];
  }
}
