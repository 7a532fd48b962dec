import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/**
 * JSON logs, one line per event. Credentials are redacted wherever they might be logged, as a
 * second line of defence: the request log itself never includes headers.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'animal-store-api' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
