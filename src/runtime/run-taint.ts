// Taint carried at the principal, journaled (issue 37): a run that starts with taint
// carried in from its principal's other runs is recorded as `warden.run.taint_inherited`
// (the sources and the runs they came from) before its id is handed out, and an
// operator's clean start — the one way to begin without that taint — is recorded as
// `warden.run.clean_started` with the operator's id and what was dropped. An entry the
// journal refuses ends the run (fail closed).
import { z } from "zod";
import type { Session, SessionStore, StartRunOptions } from "../context/index.js";
import type { Journal } from "../journal/index.js";

export const RUN_TAINT_INHERITED_EVENT = "warden.run.taint_inherited";
export const RUN_CLEAN_STARTED_EVENT = "warden.run.clean_started";

const Id = z.string().min(1).max(256);
const Sources = z.array(z.string().min(1).max(64)).max(64);

export const RunTaintInheritedBodySchema = z.strictObject({
  run_id: Id,
  principal_id: Id,
  sources: Sources,
  from_runs: z.array(Id).max(1024),
});

export const RunCleanStartedBodySchema = z.strictObject({
  run_id: Id,
  principal_id: Id,
  started_by: Id,
  dropped_sources: Sources,
  dropped_from: z.array(Id).max(1024),
});

/** Journals the run's inherited taint when it has any; a refused entry ends the run. */
export async function journalInheritance(
  journal: Pick<Journal, "append">,
  sessions: Pick<SessionStore, "end">,
  session: Session,
): Promise<void> {
  const f = session.snapshot();
  if (f.inheritedFrom === undefined || f.inheritedFrom.length === 0) return;
  await appendOrEnd(journal, sessions, session, {
    type: RUN_TAINT_INHERITED_EVENT,
    run_id: session.runId,
    body: {
      run_id: session.runId,
      principal_id: session.principalId,
      sources: f.inheritedTaint ?? [],
      from_runs: f.inheritedFrom,
    },
  });
}

/**
 * An operator's clean start: the run begins without the taint carried at the principal;
 * what it dropped is journaled with the operator's id (a refused entry ends the run).
 */
export async function startCleanRun(
  journal: Pick<Journal, "append">,
  sessions: SessionStore,
  start: (principalId: string, options: StartRunOptions) => Promise<Session>,
  who: { principalId: string; operatorId: string },
): Promise<Session> {
  // What is dropped: the persisted entries (loaded) and this process's open runs.
  await sessions.carry?.inherit(who.principalId, Date.now(), []);
  const dropped = sessions.carriedFor(who.principalId);
  const session = await start(who.principalId, { clean: true });
  await appendOrEnd(journal, sessions, session, {
    type: RUN_CLEAN_STARTED_EVENT,
    run_id: session.runId,
    body: {
      run_id: session.runId,
      principal_id: session.principalId,
      started_by: who.operatorId,
      dropped_sources: [...new Set(dropped?.labels.map((l) => l.source) ?? [])],
      dropped_from: dropped?.from ?? [],
    },
  });
  return session;
}

async function appendOrEnd(
  journal: Pick<Journal, "append">,
  sessions: Pick<SessionStore, "end">,
  session: Session,
  entry: Parameters<Journal["append"]>[0],
): Promise<void> {
  try {
    await journal.append(entry);
  } catch (err) {
    sessions.end(session.runId);
    throw err;
  }
}
