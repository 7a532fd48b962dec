import { pino, type Logger, type DestinationStream } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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

/**
 * `logger`'s child whose every line also carries what `fields()` returns at that moment, when it
 * returns anything (tracing: the active span's ids, src/features/tracing/tracing.ts). A child, so the
 * logger passed in is untouched: without tracing, a line costs what it always did.
 */
export function withContextFields(logger: Logger, fields: () => Readonly<Record<string, string>> | undefined): Logger {
  return logger.child(
    {},
    {
      formatters: {
        log: (object) => {
          const extra = fields();
          return extra === undefined ? object : { ...object, ...extra };
        },
      },
    },
  );
}
