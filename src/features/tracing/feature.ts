/**
 * OpenTelemetry traces, when the SDK's own variables ask for them (./config.ts): the SDK
 * (./tracing.ts) is loaded then and only then. Its stage comes first, so the whole path of a
 * request runs inside its span; each database query is a span under it (traced before the stores
 * compile their queries), and every log line written inside one carries its ids.
 */
import { traceQueries } from '../../store/queries/prepared.js';
import type { Feature } from '../feature.js';
import { readTracing } from './config.js';

export const tracing: Feature = {
  name: 'tracing',
  configure(env) {
    const config = readTracing(env);
    if (config === undefined) return undefined;
    return async (host) => {
      const { startTracing } = await import('./tracing.js');
      const traced = startTracing({ config, document: host.document, logger: host.logger });
      const { database } = host;
      traceQueries(database.db, traced.queries(database));
      return {
        stages: [{ before: 'exit', stage: traced.requests }],
        logger: traced.correlated(host.logger),
        // Last of all (features close in reverse): every request's span has ended, so the batch still held is the last to export.
        close: () => traced.shutdown(),
      };
    };
  },
};
