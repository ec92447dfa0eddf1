// The ToolClad project's example manifests (toolclad/examples in the vectors directory).
import { vectorPath } from "../vectors.js";

export const EXAMPLES = vectorPath("toolclad", "examples");
