/**
 * Starts a PGlite for the tests and waits until it is ready, replacing an instance that never gets
 * there by a fresh one, so a stuck start ends in a retry or a clear error instead of a hook timeout.
 */

/** What starting needs of a PGlite: its readiness, and closing it. */
export interface Startable {
  readonly waitReady: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions<T extends Startable> {
  create: () => T;
  /** How long one instance may take to become ready before it is given up for a fresh one. */
  readyLimitMs: number;
  /** Instances tried in all, the first included. */
  attempts: number;
  /** Where a retry is reported. */
  warn?: (message: string) => void;
}

const NOT_READY = Symbol('not ready');

function notReadyWithin(ms: number): { expired: Promise<typeof NOT_READY>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof NOT_READY>((resolve) => {
    timer = setTimeout(() => resolve(NOT_READY), ms);
  });
  return { expired, cancel: () => clearTimeout(timer) };
}

/**
 * Resolves with the first instance that becomes ready within the limit. An instance that failed
 * to start rejects at once (that is an error to read, not load to wait out).
 */
export async function startPglite<T extends Startable>(options: StartOptions<T>): Promise<T> {
  const warn = options.warn ?? ((message: string) => console.error(message));
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const pglite = options.create();
    const limit = notReadyWithin(options.readyLimitMs);
    try {
      if ((await Promise.race([pglite.waitReady, limit.expired])) !== NOT_READY) return pglite;
    } finally {
      limit.cancel();
    }
    // close() itself waits for readiness, so it is not awaited: it frees the instance if the start
    // ever completes, and otherwise nothing keeps the stuck one alive.
    pglite.close().catch(() => undefined);
    if (attempt < options.attempts) {
      warn(`PGlite was not ready within ${options.readyLimitMs} ms (attempt ${attempt} of ${options.attempts}): abandoned it, starting a fresh one`);
    }
  }
  throw new Error(`PGlite was not ready within ${options.readyLimitMs} ms, ${options.attempts} times in a row: the machine is overloaded or PGlite's start is stuck`);
}
