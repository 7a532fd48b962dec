/**
 * The request path without a socket, as `fastify.inject`, Go's `httptest` or Hono's
 * `app.request` test theirs: light-my-request (Fastify's own) hands the listener a real
 * IncomingMessage and ServerResponse and collects the answer. For the logic of the stages and
 * handlers; the transport (connections, the parser's refusals, draining) keeps its real servers,
 * and so does the lane outside the API: Express swaps the response's prototype, and with it the
 * capture light-my-request relies on (the status arrives, the body does not).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject as lightInject, type InjectOptions, type Response as InjectResponse } from 'light-my-request';
import { handlers } from '../../generated/handlers.js';
import { openStores } from '../../generated/stores.js';
import type { HandlerDeps } from '../../src/domain/contract.js';
import { createCursorCodec } from '../../src/domain/cursor.js';
import { createLogger } from '../../src/shared/logger.js';
import { configureFeatures, startFeatures } from '../../src/features/index.js';
import { compiledBackend } from '../../src/http/openapiBackend.js';
import { allowedMethods, underBasePath } from '../../src/pipeline/match.js';
import { createApp, type App, type AppOptions } from '../../src/pipeline/requestPath.js';
import type { Env } from '../../src/shared/env.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { openSqlite, type DatabaseHandle } from '../../src/store/database.js';
import { inUnitOfWork } from '../../src/store/queries/unitOfWork.js';

/** The token issuer vitest.config.ts gives every test's server, for the app made here too. */
export const TEST_OAUTH = { issuer: process.env.OAUTH_ISSUER, audience: process.env.OAUTH_AUDIENCE };

export const INJECT_KEY = `ask_${'i'.repeat(43)}`;

export interface Injectable {
  app: App;
  database: DatabaseHandle;
  /** One request through the whole list of stages; `auth: false` sends no key. */
  inject(options: InjectOptions & { auth?: boolean }): Promise<InjectResponse>;
  close(): Promise<void>;
}

/**
 * The app over a fresh SQLite file (or `databaseFile`, migrated first), accepting INJECT_KEY,
 * response validation on; `options` replace the defaults, and `adapt` may change the
 * dependencies made on that file (a store that fails).
 */
export async function injectable({ databaseFile, env = {}, ...options }: Partial<AppOptions> & { databaseFile?: string; env?: Env } = {}, adapt: (deps: HandlerDeps) => HandlerDeps = (deps) => deps): Promise<Injectable> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-inject-'));
  const database = await openSqlite(databaseFile ?? join(dir, 'store.sqlite'));
  const document = options.document ?? loadBundledSpec();
  const backend = compiledBackend(document, '/v1', true);
  const features = await startFeatures(configureFeatures(env), {
    document,
    backend,
    serves: (url) => underBasePath('/v1', url),
    allowedMethods: (path) => allowedMethods(backend, path),
    database,
    logger: createLogger('silent'),
    keysLoadedAt: () => undefined,
    observers: {},
    listen: () => Promise.reject(new Error('no listener in process')),
  });
  const app = createApp({
    document,
    handlers,
    deps: adapt({ ...openStores({ db: database.db, dialect: database.dialect, document }), cursors: createCursorCodec('inject'), basePath: '/v1', unitOfWork: (work) => inUnitOfWork(database.db, work) }),
    keys: { check: (token) => (token === INJECT_KEY ? { caller: 'inject' } : 'invalid') },
    ping: database.ping,
    logger: createLogger('silent'),
    validateResponses: true,
    oauth: TEST_OAUTH,
    docsFile: join(dir, 'no-docs.html'),
    featureStages: features.stages,
    ...options,
  });
  return {
    app,
    database,
    inject({ auth = true, headers = {}, ...rest }) {
      return lightInject(app.app, { ...rest, headers: auth ? { authorization: `Bearer ${INJECT_KEY}`, ...headers } : headers });
    },
    async close() {
      await features.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `fetch` over the listener in process, as the typed client and a test's own calls make it: the
 * same Request in (a path, or a URL whose origin is ignored; any body fetch takes, read to bytes)
 * and the same Response out as from a socket. What only a socket shows (a connection closed, a
 * body streamed as it comes, node:http's own refusals) stays with the real listener.
 */
export type InProcessFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function inProcessFetch(listener: RequestListener): InProcessFetch {
  return async (input, init) => {
    const request = new Request(typeof input === 'string' && input.startsWith('/') ? new URL(input, 'http://in-process') : input, init);
    const { pathname, search } = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const answer = await lightInject(listener, { method: request.method as InjectOptions['method'], url: `${pathname}${search}`, headers, ...(payload === undefined ? {} : { payload }) });
    const answered = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) for (const one of [value].flat()) answered.append(name, String(one));
    const bodiless = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD';
    const response = new Response(bodiless ? null : new Uint8Array(answer.rawPayload), { status: answer.statusCode, statusText: answer.statusMessage, headers: answered });
    // As fetch's: the URL asked for, which a client resolves the answer's relative links against.
    Object.defineProperty(response, 'url', { value: request.url });
    return response;
  };
}
