// The executors of a runtime, built by the composition root over the runtime's shared
// executor dependencies (journal, circuit breakers, DARE facts): entry points choose
// which media they serve through configuration and never construct an executor
// themselves. An executor that is not configured is absent, so a ticket for its medium
// is refused by the entry point's routing (fail closed), never served by a default.
import {
  type ExecutorDeps,
  FileExecutor,
  type FileExecutorOptions,
  HttpExecutor,
  type HttpExecutorOptions,
  ProcessExecutor,
  type ProcessExecutorOptions,
} from "../executors/index.js";

export interface RuntimeExecutorsConfig {
  http?: HttpExecutorOptions;
  process?: ProcessExecutorOptions;
  /** Built-in file tools' root (absolute, existing); the executor starts on first use. */
  file?: FileExecutorOptions;
}

export interface RuntimeExecutors {
  readonly http: HttpExecutor | undefined;
  readonly process: ProcessExecutor | undefined;
  /** The file executor, started on first use; undefined when no root is configured. */
  file(): FileExecutor | undefined;
}

/** Builds the configured executors; bad options throw their coded errors at start-up. */
export function composeExecutors(
  config: RuntimeExecutorsConfig | undefined,
  deps: ExecutorDeps,
): RuntimeExecutors {
  const http = config?.http !== undefined ? new HttpExecutor(config.http, deps) : undefined;
  const process = config?.process !== undefined ? new ProcessExecutor(config.process, deps) : undefined;
  const fileOptions = config?.file;
  let file: FileExecutor | undefined;
  return {
    http,
    process,
    file() {
      if (fileOptions === undefined) return undefined;
      file ??= new FileExecutor(fileOptions, deps);
      return file;
    },
  };
}
