/**
 * The request path without a socket, as `fastify.inject`, Go's `httptest` or Hono's
 * `app.request` test theirs: light-my-request (Fastify's own) hands the listener a real
 * IncomingMessage and ServerResponse and collects the answer. For the logic of the stages and
 * handlers; the transport (connections, the parser's refusals, draining) keeps its real servers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject as lightInject, type InjectOptions, type Response } from 'light-my-request';
import { handlers } from '../../generated/handlers.js';
import { openStores } from '../../generated/stores.js';
import { createCursorCodec } from '../../src/cursor.js';
import { createLogger } from '../../src/logger.js';
import { createApp, type App, type AppOptions } from '../../src/pipeline/requestPath.js';
import { loadBundledSpec } from '../../src/spec.js';
import { openSqlite, type DatabaseHandle } from '../../src/store/database.js';

export const INJECT_KEY = `ask_${'i'.repeat(43)}`;

export interface Injectable {
  app: App;
  database: DatabaseHandle;
  /** One request through the whole list of stages; `auth: false` sends no key. */
  inject(options: InjectOptions & { auth?: boolean }): Promise<Response>;
  close(): Promise<void>;
}

/** The app over a fresh SQLite file, accepting INJECT_KEY, response validation on; `options` replace the defaults. */
export async function injectable(options: Partial<AppOptions> = {}): Promise<Injectable> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-inject-'));
  const database = await openSqlite(join(dir, 'store.sqlite'));
  const document = loadBundledSpec();
  const app = createApp({
    document,
    handlers,
    deps: { ...openStores({ db: database.db, dialect: database.dialect }), cursors: createCursorCodec('inject'), basePath: '/v1' },
    keys: { check: (token) => (token === INJECT_KEY ? { caller: 'inject' } : 'invalid') },
    ping: database.ping,
    logger: createLogger('silent'),
    validateResponses: true,
    docsFile: join(dir, 'no-docs.html'),
    ...options,
  });
  return {
    app,
    database,
    inject({ auth = true, headers = {}, ...rest }) {
      return lightInject(app.app, { ...rest, headers: auth ? { authorization: `Bearer ${INJECT_KEY}`, ...headers } : headers });
    },
    async close() {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
