/**
 * Exactly-once (./stage.ts) for every operation that declares the `Idempotency-Key` header: on
 * whenever the contract has one, with no setting; records are purged past their retention
 * (./purge.ts) while the server runs.
 */
import type { Feature } from '../feature.js';
import { startIdempotencyPurge } from './purge.js';
import { exactlyOnceStage } from './stage.js';

export const exactlyOnce: Feature = {
  name: 'exactlyOnce',
  configure() {
    return (host) => {
      const { database, logger } = host;
      // No operation takes a key: no stage; records kept from a contract that had one are still purged.
      const stage = exactlyOnceStage(host.backend.getOperations(), { db: database.db, dialect: database.dialect, onBatch: host.observers.batch });
      const purge = startIdempotencyPurge(database.db, {
        onPurged: (count) => logger.info({ count }, 'purged Idempotency-Key records past their retention'),
        onError: (error) => logger.warn({ err: error }, 'could not purge old Idempotency-Key records'),
      });
      return { stages: stage === undefined ? [] : [{ before: 'handle', stage }], close: () => purge.stop() };
    };
  },
};
