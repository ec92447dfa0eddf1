// APAE between deployments: signed trust assertions sent to peers (each recipient recorded
// in the trust store), the quarantine broadcast to every peer that received an assertion
// about the subject (APAE §Quarantine Protocol), and the receiving side: a peer's ECT is
// verified with that peer's configured key (ES256) before it touches the table.
import type { KeyObject } from "node:crypto";
import { TrustError } from "../contracts/index.js";
import { keyIdOf, loadPrivateKeyFile, loadPublicKeyFile } from "../crypto/index.js";
import {
  assertionExt,
  EctEmitter,
  emitChange,
  QUARANTINE_ACT,
  receiveAssertion,
  receiveQuarantineNotice,
  TRUST_ASSERTION,
  type TrustChange,
  type TrustDeliveryFailedBody,
  type TrustEngine,
  type TrustView,
  verifyEct,
} from "../trust/index.js";

export interface ApaePeerConfig {
  /** The peer's ECT issuer id. */
  id: string;
  /** Base URL of the peer's sidecar (its `POST /v1/apae/notify` receives our ECTs). */
  url: string;
  /** The peer's P-256 public key file (PEM or JWK): its ECTs must verify with it. */
  key: string;
}

export interface ApaeEctConfig {
  /** This deployment's ECT issuer id (what peers name it by). */
  issuer: string;
  /** P-256 private key file (0600) that signs this deployment's ECTs (L2). */
  key: string;
}

/** What a received ECT did; refusals carry a trust-family code. */
export type PeerReceipt =
  | { ok: true; act: string; change: TrustChange }
  | { ok: false; code: string; message: string };

export interface PeerDelivery {
  peer: string;
  jti: string;
  /** The peer's HTTP status, or null when it could not be reached. */
  status: number | null;
}

interface Peer {
  id: string;
  url: string;
  key: KeyObject;
}

const NOTIFY_PATH = "/v1/apae/notify";
const DELIVERY_TIMEOUT_MS = 5000;

/** Bounded retries of a notification (network error, 429 or 5xx): backoff doubling to a cap. */
export interface DeliveryOptions {
  /** Attempts in all (default 4). */
  attempts?: number;
  /** First backoff (default 500 ms), doubled per retry up to `maxBackoffMs` (default 30 000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Told when every attempt failed (the runtime journals `warden.trust.delivery_failed`). */
  onGiveUp?: (body: TrustDeliveryFailedBody) => Promise<void>;
}

/** Worth another attempt: unreachable, rate limited or a server fault (a 4xx refusal is final). */
const retryable = (status: number | null) => status === null || status === 429 || status >= 500;
const sleep = (ms: number) =>
  new Promise<void>((r) => {
    setTimeout(r, ms).unref();
  });

function configError(message: string, cause?: unknown): TrustError {
  return new TrustError("ERR_TRUST_CONFIG_INVALID", message, cause === undefined ? {} : { cause });
}

export class ApaePeers {
  readonly issuer: string;
  readonly #engine: TrustEngine;
  readonly #emitter: EctEmitter;
  readonly #peers = new Map<string, Peer>();
  /** jtis of peer ECTs already taken, with their exp (ms): a replay is refused until then. */
  readonly #seen = new Map<string, number>();
  readonly #delivery: DeliveryOptions;

  constructor(
    engine: TrustEngine,
    ect: ApaeEctConfig,
    peers: readonly ApaePeerConfig[],
    o: { clock: () => number; delivery?: DeliveryOptions },
  ) {
    const clock = o.clock;
    this.#delivery = o.delivery ?? {};
    this.#engine = engine;
    this.issuer = ect.issuer;
    let pair: ReturnType<typeof loadPrivateKeyFile>;
    try {
      pair = loadPrivateKeyFile(ect.key);
    } catch (err) {
      throw configError(`apae.ect.key: ${(err as Error).message}`, err);
    }
    if (pair.type !== "p256") throw configError("apae.ect.key must be a P-256 (ES256) private key");
    this.#emitter = new EctEmitter({
      level: "L2",
      issuer: ect.issuer,
      key: { kid: pair.keyId, privateKey: pair.privateKey },
      clock,
    });
    for (const p of peers) {
      if (p.id === ect.issuer || this.#peers.has(p.id)) throw configError(`apae.peers: ${p.id} named twice`);
      let key: KeyObject;
      try {
        key = loadPublicKeyFile(p.key);
      } catch (err) {
        throw configError(`apae.peers.${p.id}.key: ${(err as Error).message}`, err);
      }
      this.#peers.set(p.id, { id: p.id, url: p.url.replace(/\/+$/, ""), key });
    }
  }

  /** Emits a signed (L2) ECT as this deployment. */
  emit(input: Parameters<EctEmitter["emit"]>[0]): ReturnType<EctEmitter["emit"]> {
    return this.#emitter.emit(input);
  }

  peerIds(): string[] {
    return [...this.#peers.keys()].sort();
  }

  /** The key of (iss, kid) when iss is a configured peer and kid names its key. */
  #keyOf = (iss: string, kid: string): KeyObject | undefined => {
    const peer = this.#peers.get(iss);
    return peer !== undefined && keyIdOf(peer.key) === kid ? peer.key : undefined;
  };

  /** Delivers with bounded retries; a give-up is reported (journaled) once. */
  async #deliver(
    peer: Peer,
    token: string,
    claims: { jti: string; exec_act: string },
  ): Promise<PeerDelivery> {
    const attempts = Math.max(1, this.#delivery.attempts ?? 4);
    let backoff = this.#delivery.backoffMs ?? 500;
    let last: PeerDelivery = { peer: peer.id, jti: claims.jti, status: null };
    for (let i = 1; i <= attempts; i++) {
      last = await this.#attempt(peer, token, claims.jti);
      if (!retryable(last.status)) return last;
      if (i < attempts) {
        await sleep(backoff);
        backoff = Math.min(backoff * 2, this.#delivery.maxBackoffMs ?? 30_000);
      }
    }
    await this.#delivery.onGiveUp?.({
      peer: peer.id,
      jti: claims.jti,
      exec_act: claims.exec_act,
      attempts,
      last_status: last.status,
    });
    return last;
  }

  async #attempt(peer: Peer, token: string, jti: string): Promise<PeerDelivery> {
    try {
      const res = await fetch(`${peer.url}${NOTIFY_PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ect: token }),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      return { peer: peer.id, jti, status: res.status };
    } catch {
      return { peer: peer.id, jti, status: null };
    }
  }

  /** Sends a signed trust assertion about `subject` (our view of it) to `peerId`, recording the recipient. */
  async assert(view: TrustView, peerId: string): Promise<PeerDelivery> {
    const peer = this.#peers.get(peerId);
    if (peer === undefined)
      throw new TrustError("ERR_TRUST_ASSERTION_INVALID", `${peerId} is not a configured peer`);
    const { token, claims } = await this.#emitter.emit({
      exec_act: TRUST_ASSERTION,
      aud: peer.id,
      ext: assertionExt(view),
    });
    // Recorded before delivery: a peer that may have it must hear of a later quarantine.
    await this.#engine.store.addRecipient(view.subject, peer.id);
    return this.#deliver(peer, token, claims);
  }

  /** Broadcasts a quarantine entry in `change` to every peer that received assertions about its subject. */
  async broadcast(change: TrustChange): Promise<PeerDelivery[]> {
    const recipients = (await this.#engine.store.recipients(change.view.subject))
      .map((id) => this.#peers.get(id))
      .filter((p): p is Peer => p !== undefined);
    if (recipients.length === 0) return [];
    const entry: TrustChange = {
      ...change,
      emitted: change.emitted.filter(
        (e) => e.execAct === QUARANTINE_ACT && e.ext["apae.to_state"] === "quarantined",
      ),
    };
    const out: PeerDelivery[] = [];
    for (const { token, claims } of await emitChange(
      this.#emitter,
      entry,
      recipients.map((p) => p.id),
    )) {
      out.push(...(await Promise.all(recipients.map((p) => this.#deliver(p, token, claims)))));
    }
    return out;
  }

  /**
   * A peer's ECT (assertion or quarantine notice), verified with the peer's key and
   * addressed to us. The route has no bearer credential: the signature is the
   * authentication, so a token that fails verification is refused and charged to no one.
   */
  async receive(token: string): Promise<PeerReceipt> {
    const now = this.#engine.now();
    const v = await verifyEct(token, {
      level: "L2",
      keys: this.#keyOf,
      sender: "unauthenticated",
      now,
      audience: this.issuer,
    });
    if (!v.ok) return { ok: false, code: v.code, message: v.message };
    for (const [jti, exp] of this.#seen) if (exp <= now) this.#seen.delete(jti);
    const key = `${v.claims.iss}\u0000${v.claims.jti}`;
    if (this.#seen.has(key)) {
      return {
        ok: false,
        code: "ERR_TRUST_ECT_DUPLICATE",
        message: `ECT ${v.claims.jti} was already received`,
      };
    }
    this.#seen.set(key, v.claims.exp * 1000);
    const act = v.claims.exec_act;
    const outcome =
      act === TRUST_ASSERTION
        ? await receiveAssertion(this.#engine, v)
        : act === QUARANTINE_ACT
          ? await receiveQuarantineNotice(this.#engine, v)
          : ({
              ok: false,
              code: "ERR_TRUST_ASSERTION_INVALID",
              message: `${act} is not taken from peers`,
            } as const);
    return outcome.ok ? { ok: true, act, change: outcome.change } : outcome;
  }
}
