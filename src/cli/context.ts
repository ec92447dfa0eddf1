// What every command is run with: the streams (injectable for tests) and the exit code.
// Kept free of any layer import, so `warden --help` loads nothing else.

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is an interactive terminal (progress bars, colours). */
  isTTY: boolean;
}

export const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stdout.isTTY),
};

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface CliContext {
  io: CliIo;
  exitCode: number;
}
