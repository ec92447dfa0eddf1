// The two principals' credentials of bench/flood.ts (shared by the bench and its server child).
export const FLOOD_TOKENS = {
  hostile: "flood-hostile-token-0123456789",
  honest: "flood-honest-token-0123456789",
} as const;
