/**
 * `npm start`: the production entry point. Reads the environment, starts the server, and stops
 * it cleanly on SIGTERM or SIGINT.
 */
import { ConfigError } from './shared/env.js';
import { loadConfig } from './config.js';
import { createLogger } from './shared/logger.js';
import { startServer } from './server.js';
import { describeLocation, explainDatabaseError } from './store/databaseErrors.js';
import { exitOnSignals } from './transport/shutdown.js';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
const logger = createLogger(config.logLevel);

const starting = startServer({ config, logger });
// Listening before the signal handlers exist would let a SIGTERM sent as soon as the port answers
// (a supervisor, a test) kill the process with no clean stop; a signal during the start waits for it.
exitOnSignals(logger, {
  // Drains first when a balancer has been probing /readyz (or SHUTDOWN_DRAIN_MS asks); a server nobody probes stops at once.
  stop: async () => (await starting).shutdown(),
  messages: { stopping: 'shutting down: finishing in-flight requests', stopped: 'stopped', failed: 'shutdown failed' },
});
const server = await starting.catch((error: unknown) => {
  // A database that cannot be used (refused, unknown host, password, TLS, permission, missing) is
  // an operator's typo or setup, not a bug: one line naming the address and the likely cause,
  // and the driver's stack only when asked for (LOG_LEVEL=debug or trace).
  const location = describeLocation(config.databaseUrl, config.sqlitePath);
  const line = explainDatabaseError(error, location);
  if (line === undefined) logger.fatal({ err: error }, 'could not start');
  else logger.fatal({ database: location, ...(logger.isLevelEnabled('debug') ? { err: error } : {}) }, line);
  process.exit(1);
});

const origin = server.origin.replace('127.0.0.1', 'localhost');
const base = `${origin}${server.basePath}`;
const { dialect, location, schema } = server.database;
logger.info({ url: base, docs: `${origin}/docs`, database: dialect, data: location, ...(schema === undefined ? {} : { schema }) }, 'listening');
const banner = [
  `Animal Store API listening on ${base}`,
  `  docs:     ${origin}/docs   contract: ${origin}/openapi.json`,
  `  data:     ${location} (${dialect}${schema === undefined ? '' : `, tables in schema ${schema}`})`,
];
if (server.bootstrapKey) {
  // Shown once, on the console only: the structured log never carries a key.
  banner.push(
    '',
    `No API key existed, so one was created (id ${server.bootstrapKey.id}). It is shown only now:`,
    '',
    `  ${server.bootstrapKey.key}`,
    '',
    `Try: curl -H "Authorization: Bearer <key>" ${base}/pets`,
    'Make more with `npm run keys -- create <name>`; revoke this one with `npm run keys -- revoke <id>`.',
    '',
  );
}
if (server.noActiveKey) {
  banner.push('', 'No API key is active, so every request under the API is refused with 401.', 'Make one with `npm run keys -- create <name>` (it works here within seconds; the command says when).', '');
}
// One write, so whoever reads the console sees the whole banner at once.
process.stdout.write(`${banner.join('\n')}\n`);
