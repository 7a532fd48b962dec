/**
 * Metrics, with METRICS_PORT only (./metrics.ts, loaded then and only then): every request is
 * counted and timed, whatever lane answers it (a clock read and one 'close' listener; the route,
 * read then, is a bounded name, never the path).
 */
import type { Stage } from '../../pipeline/stage.js';
import type { Metrics } from './metrics.js';

export function metricsStage(metrics: Pick<Metrics, 'track'>): Stage {
  return {
    name: 'metrics',
    run(exchange) {
      metrics.track(exchange);
      return undefined;
    },
  };
}
