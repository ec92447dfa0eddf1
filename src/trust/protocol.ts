// The engine's protocol ECTs (apae:quarantine entry and recovery, apae:trust_revoke) as
// real ECTs: the engine returns them as data (TrustEmission), and this turns each into an
// ECT at the emitter's assurance level (unsigned at L1, ES256 at L2, ledgered at L3), with
// `par` naming the ECT of the event that caused it when there is one. And the other way:
// an ECT received from a peer is verified at the configured level, and a failed
// attestation is applied to the sender's row as attestation_invalid.
import {
  type EctClaims,
  type EctEmitter,
  type EctInput,
  type EctVerification,
  type EctVerifyOptions,
  verifyEct,
} from "./ect.js";
import type { TrustChange, TrustEngine } from "./engine.js";
import type { TrustEmission } from "./table.js";

/** The ECT input of one emission, addressed to `aud` (the peers told of it). */
export function emissionInput(
  e: TrustEmission,
  aud: string | string[],
  par: readonly string[] = [],
): EctInput {
  return { exec_act: e.execAct, aud, par: [...par], ext: { ...e.ext } };
}

/** Emits every protocol ECT of a change; resolves to the tokens in order. */
export async function emitChange(
  emitter: Pick<EctEmitter, "emit">,
  change: TrustChange,
  aud: string | string[],
): Promise<{ token: string; claims: EctClaims }[]> {
  const cause = change.steps.map((s) => s.ect).filter((x): x is string => x !== null);
  const out: { token: string; claims: EctClaims }[] = [];
  for (const e of change.emitted) out.push(await emitter.emit(emissionInput(e, aud, cause.slice(-1))));
  return out;
}

/**
 * Verifies an ECT received from `sender` and, when the attestation fails (bad signature,
 * unsigned where signed is required), applies `attestation_invalid` to the sender in
 * `truster`'s table (default: the deployment's).
 */
export async function receiveEct(
  engine: TrustEngine,
  token: string,
  options: EctVerifyOptions & { truster?: string },
): Promise<{ verification: EctVerification; change: TrustChange | null }> {
  const verification = await verifyEct(token, options);
  if (verification.ok || verification.trustEvent === null) return { verification, change: null };
  const input = {
    subject: verification.trustEvent.subject,
    event: verification.trustEvent.event,
    ect: null,
    at: options.now,
  };
  const change = await engine.apply(
    options.truster === undefined ? input : { ...input, truster: options.truster },
  );
  return { verification, change };
}
