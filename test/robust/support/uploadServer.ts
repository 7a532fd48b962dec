/**
 * The production server with the upload fixture operations (./uploadOperations.ts): src/main.ts's
 * start, stop and banner, on the bundled contract plus those operations. Bundled by
 * ./fixtureServer.ts exactly as scripts/build.ts bundles src/main.ts, and run with npm start's node
 * flags, so the proofs measure the server's own request path, memory and timeouts.
 */
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/shared/logger.js';
import { startServer } from '../../../src/server.js';
import { exitOnSignals } from '../../../src/transport/shutdown.js';
import { loadBundledSpec } from '../../../src/shared/spec.js';
import { withUploadOperations } from './uploadOperations.js';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const starting = startServer({ config, logger, document: withUploadOperations(loadBundledSpec()) });
exitOnSignals(logger, { stop: async () => (await starting).shutdown(), messages: { stopping: 'shutting down', stopped: 'stopped', failed: 'shutdown failed' } });
const server = await starting;
// The banner test/robust/support/server.ts reads: src/main.ts's first line and its key line.
const lines = [`Animal Store API (upload fixtures) listening on ${server.origin}${server.basePath}`];
if (server.bootstrapKey) lines.push('', `  ${server.bootstrapKey.key}`, '');
process.stdout.write(`${lines.join('\n')}\n`);
