// Journal event types the Gate writes; their body schemas live in src/contracts
// (gate-events.ts) and are among the journal's built-in types (builtinEventTypes(), hence
// the process-wide registry), so any journal or verifier checks these bodies on append and
// on verification without loading the Gate. registerGateEventTypes is only needed for a
// registry built from scratch (new EventTypeRegistry()).
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
