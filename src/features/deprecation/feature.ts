/**
 * Deprecated operations, from the spec's own markers (./deprecation.ts): their headers on every
 * answer, each call heard once the key check has spoken (per key in the store, ./calls.ts, and in the metrics), and the 410 of a
 * brownout (DEPRECATION_BROWNOUTS, ./config.ts) or a past sunset. On whenever the contract
 * deprecates an operation; no stage otherwise.
 */
import { operationsOf } from '../../shared/spec.js';
import type { Feature } from '../feature.js';
import { createDeprecatedCallLog } from './calls.js';
import { readBrownouts, readCallsFlushMs } from './config.js';
import { Deprecations, deprecationStage, sunsetStage } from './deprecation.js';

export const deprecation: Feature = {
  name: 'deprecation',
  configure(env) {
    const brownouts = readBrownouts(env);
    const flushMs = readCallsFlushMs(env);
    return (host) => {
      const deprecations = new Deprecations(operationsOf(host.document), brownouts);
      if (!deprecations.any) return {};
      const { logger, observers } = host;
      // Who still calls deprecated operations, per key, in the store (written in batches).
      const calls = createDeprecatedCallLog(host.database.db, (error) => logger.warn({ err: error }, 'could not record calls of deprecated operations'), flushMs);
      return {
        stages: [
          { before: 'authenticate', stage: deprecationStage(deprecations, (operationId, caller, at) => {
            observers.deprecatedCall?.(operationId);
            // A 401's caller is nobody: counted, not logged per key.
            if (caller !== undefined) calls.record(operationId, caller, at);
          }) },
          { before: 'body', stage: sunsetStage(deprecations) },
        ],
        // After the last request, before the database closes: no counted call is lost.
        close: () => calls.close(),
      };
    };
  },
};
