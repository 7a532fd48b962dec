/**
 * The probes, answered before anything else and cheaply: `GET /healthz` (alive) and `GET /readyz`
 * (the database answers; 503 while draining).
 */
import { refuse } from '../errors/refusal.js';
import type { Readiness } from '../transport/drain.js';
import type { Exchange } from '../http/exchange.js';
import { answerJson } from '../http/respond.js';
import type { Logger } from '../shared/logger.js';
import type { Stage } from '../http/stage.js';
import { outsideApi, type LaneOptions } from './web.js';

const READY_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export function probesStage(options: LaneOptions & { ping: () => Promise<void>; readiness?: Readiness | undefined }): Stage {
  const { readiness, logger } = options;
  /**
   * /readyz: 200 when the database answers within READY_TIMEOUT_MS, else a 503 Error; a 503 at
   * once while draining, so a balancer stops routing here before the listener closes.
   */
  async function answerReadiness(exchange: Exchange): Promise<void> {
    if (readiness !== undefined) {
      readiness.lastProbeAt = performance.now();
      if (readiness.draining) throw refuse('service_unavailable', 'shuttingDown');
    }
    try {
      await withTimeout(options.ping(), READY_TIMEOUT_MS);
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      throw refuse('service_unavailable', 'databaseUnreachable');
    }
    answerJson(exchange, 200, { status: 'ok' });
  }
  return {
    name: 'probes',
    run(exchange, next) {
      const path = outsideApi(exchange, options.serves);
      if (path === '/healthz') {
        answerJson(exchange, 200, { status: 'ok' });
        return undefined;
      }
      if (path === '/readyz') return answerReadiness(exchange);
      return next(exchange);
    },
  };
}

