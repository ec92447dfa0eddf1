// Journal event types the Gate writes; their body schemas live in src/contracts
// (gate-events.ts) so any verifier can check them. Registered in the journal's
// process-wide registry when this module loads (so a process that loads the Gate layer,
// the CLI included, verifies these bodies too) and again by each Gate for the registry it
// is given, so bodies are schema-checked on append and on verification.
import type { z } from "zod";
import { GATE_EVENT_SCHEMAS } from "../contracts/index.js";
import { defaultEventTypes, type EventTypeRegistry } from "../journal/index.js";

export {
  GATE_DECISION,
  GATE_RESOLUTION,
  GATE_RESULT,
  GateDecisionBody,
  GateResolutionBody,
  GateResultBody,
} from "../contracts/index.js";

export function registerGateEventTypes(registry: EventTypeRegistry = defaultEventTypes): void {
  for (const [type, schema] of Object.entries(GATE_EVENT_SCHEMAS) as [string, z.ZodType][]) {
    if (!registry.has(type)) registry.register(type, schema);
  }
}

registerGateEventTypes();
