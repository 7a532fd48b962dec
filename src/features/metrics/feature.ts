/**
 * Metrics, with METRICS_PORT only (./config.ts): prom-client (./metrics.ts) is loaded then and
 * only then, on a listener of its own, never the API's. Its stage counts and times every request,
 * whatever lane answers it (a clock read and one 'close' listener; the route, read then, is a
 * bounded name, never the path); it counts what the others report (group commits, deprecated
 * calls, a rate limit failing open, webhook attempts) through the host's observers.
 */
import { DEFAULT_METRICS_MAX_CONNECTIONS, readMetrics } from './config.js';
import type { Feature } from '../feature.js';

export const metrics: Feature = {
  name: 'metrics',
  configure(env) {
    const settings = readMetrics(env);
    if (settings === undefined) return undefined;
    return async (host) => {
      const { createMetrics } = await import('./metrics.js');
      const { database } = host;
      const counted = createMetrics({ dialect: database.dialect, poolCounts: database.poolCounts, keysLoadedAt: host.keysLoadedAt, document: host.document });
      const listening = await host.listen(counted.listener, { port: settings.port, host: settings.host, maxConnections: DEFAULT_METRICS_MAX_CONNECTIONS });
      host.observers.batch = counted.observeBatch;
      host.observers.deprecatedCall = counted.countDeprecatedCall;
      host.observers.rateLimitFailOpen = counted.countRateLimitFailOpen;
      host.observers.webhookAttempt = counted.countWebhookAttempt;
      host.logger.info({ metrics: `${listening.origin}/metrics` }, 'metrics listening');
      return {
        stages: [
          {
            before: 'probes',
            stage: {
              name: 'metrics',
              run(exchange, next) {
                counted.track(exchange);
                return next(exchange);
              },
            },
          },
        ],
        close: () => listening.close(),
        origin: listening.origin,
      };
    };
  },
};
