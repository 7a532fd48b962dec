import type { Logger } from '../shared/logger.js';

export interface Shutdown {
  /** Stops serving and closes what was opened (in-flight requests finish first). */
  stop(): Promise<void>;
  /** Runs once `stop` has settled, whether it worked or not (the sandbox deletes its store). */
  afterwards?: () => void;
  /** The log lines: on the signal, once stopped, and when stopping failed. */
  messages: { stopping: string; stopped: string; failed: string };
}

/**
 * On SIGTERM or SIGINT (a supervisor, a container runtime, Ctrl-C), stops gracefully once and
 * exits 0, or 1 when stopping failed; a second signal while stopping changes nothing. The
 * server's entry (../main.ts) and the sandbox (scripts/sandbox.ts) both stop this way.
 */
export function exitOnSignals(logger: Logger, shutdown: Shutdown): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, shutdown.messages.stopping);
      shutdown.stop().then(
        () => {
          shutdown.afterwards?.();
          logger.info(shutdown.messages.stopped);
          process.exit(0);
        },
        (error: unknown) => {
          shutdown.afterwards?.();
          logger.error({ err: error }, shutdown.messages.failed);
          process.exit(1);
        },
      );
    });
  }
}
