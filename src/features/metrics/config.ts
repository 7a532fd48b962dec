/** METRICS_PORT and METRICS_HOST, read at start (./feature.ts). */
import { ConfigError, readHost, readInteger, type Env } from '../../shared/env.js';

export interface MetricsSettings {
  /** `0` picks a free port (tests). */
  port: number;
  /** 127.0.0.1 unless METRICS_HOST says otherwise. */
  host: string;
}

/** A scraper or two: the metrics listener's own small bound on connections, out of the API's. */
export const DEFAULT_METRICS_MAX_CONNECTIONS = 64;

/**
 * METRICS_PORT and METRICS_HOST: off unless METRICS_PORT is set; METRICS_HOST alone is refused
 * (it would look like metrics were on). The port must not be the API's (PORT, 8080 by default):
 * /metrics is never served on the public listener.
 */
export function readMetrics(env: Env): MetricsSettings | undefined {
  const port = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : readInteger(env, 'METRICS_PORT', 0, 0, 65535);
  if (port === undefined) {
    if (env.METRICS_HOST !== undefined && env.METRICS_HOST !== '') throw new ConfigError('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve metrics, or unset METRICS_HOST');
    return undefined;
  }
  const apiPort = readInteger(env, 'PORT', 8080, 0, 65535);
  if (port !== 0 && port === apiPort) throw new ConfigError(`METRICS_PORT must differ from PORT (${apiPort}): metrics are never served on the API's port`);
  return { port, host: readHost(env, 'METRICS_HOST') };
}
