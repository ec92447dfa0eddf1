// Public face of the identity layer: agent credentials (AgentPin). Other parts of the
// layer (capability tokens, delegation grants, messages) add their own export lines.
export * from "./agentpin/index.js";
