/** METRICS_PORT and METRICS_HOST, read at start (src/config.ts puts them in the configuration). */
import { ConfigError, readHost, readInteger, type Env } from '../../shared/env.js';

/**
 * METRICS_PORT and METRICS_HOST: off unless METRICS_PORT is set; METRICS_HOST alone is refused
 * (it would look like metrics were on). The port must not be the API's: /metrics is never served
 * on the public listener.
 */
export function readMetrics(env: Env, port: number): { metricsPort?: number; metricsHost?: string } {
  const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : readInteger(env, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort === undefined) {
    if (env.METRICS_HOST !== undefined && env.METRICS_HOST !== '') throw new ConfigError('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve metrics, or unset METRICS_HOST');
    return {};
  }
  if (metricsPort !== 0 && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): metrics are never served on the API's port`);
  return { metricsPort, metricsHost: readHost(env, 'METRICS_HOST') };
}
