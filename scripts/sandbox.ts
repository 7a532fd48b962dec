/**
 * `npm run sandbox`: the real server's code (src/server.ts: openapi-backend, the handlers, Kysely
 * on SQLite) on a throwaway store, for frontend teams: real paging, real 404s and validation
 * details, and their own creates back, where the mock (`npm run mock`) stores nothing.
 *
 * What makes it a sandbox is composed here and only here; src/main.ts (`npm start`) reads no
 * setting that turns any of it on:
 * - the store is a SQLite file in a fresh temp folder, seeded from the contract's examples and
 *   deleted when the sandbox stops (SIGINT, SIGTERM, or a crash);
 * - one documented key, `Bearer sandbox`, is accepted (src/features/sandbox/token.ts, passed to
 *   startServer as its key check); any other is the real 401 for a key never issued;
 * - every response carries `X-Sandbox: true`, and `POST /__sandbox/reset` (outside /v1) restores
 *   the seeds (src/features/sandbox/sandbox.ts: a stage put first in the list);
 * - it refuses to start with NODE_ENV=production or DATABASE_URL set, and binds 127.0.0.1 unless
 *   told otherwise.
 * None of those modules is imported by src/main.ts, so none is in the production bundle.
 *
 * package.json runs this with `exec node --import tsx …`: npm passes SIGTERM to the shell it
 * started, and a shell that forks (dash) would die and leave the sandbox running with its store;
 * with `exec` the signal reaches this process, and the store is deleted.
 */
import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_TOKEN, sandboxToken } from '../src/features/sandbox/token.js';
import { checkEndpointUrl, EndpointRefused } from '../src/features/webhooks/address.js';
import { createEndpointStore } from '../src/features/webhooks/endpoints.js';
import { ConfigError } from '../src/shared/env.js';
import { loadConfig, type Config } from '../src/config.js';
import { SANDBOX_HEADER, SANDBOX_RESET_PATH, withSandbox } from '../src/features/sandbox/sandbox.js';
import { createLogger } from '../src/shared/logger.js';
import type { Pet } from '../src/shared/schemas.js';
import { startServer, type RunningServer } from '../src/server.js';
import { exitOnSignals } from '../src/transport/shutdown.js';
import { loadBundledSpec, type OpenApiDocument } from '../src/shared/spec.js';
import { openSqlite, type DatabaseHandle } from '../src/store/database.js';
import { explainDatabaseError } from '../src/store/databaseErrors.js';
import { createSandboxStore, type SandboxSeeds } from '../src/features/sandbox/store.js';
import type { NewPetRecord } from '../src/store/resources/pets.js';
import { commandLine, fail } from './lib/commandLine.js';
import { isNode, operationsOf, type Node } from './lib/operations.js';

const DEFAULT_PORT = 4011;
const DEFAULT_HOST = '127.0.0.1';

const HELP = `Usage: npm run sandbox [-- [--port <port>] [--host <host>]]

Runs the real server's code (the same handlers, validation, paging and errors as \`npm start\`)
on a throwaway SQLite store, for building and testing a frontend:
http://${DEFAULT_HOST}:${DEFAULT_PORT}/v1/pets, /v1/pets/{petId}; docs at /docs.

  --port <port>   port to listen on (default ${DEFAULT_PORT}; 0 picks a free one). PORT is not read:
                  it is the real server's, so both can run side by side.
  --host <host>   address to listen on (default ${DEFAULT_HOST}: this machine only)
  --help          show this text

Data: a SQLite file in a new temp folder, seeded from the contract's examples (the pets of
listPets' 200 examples with their ids, then any createPet request example not among them), and
deleted when the sandbox stops. Nothing is read from or written to data/.

Key: "Authorization: Bearer ${SANDBOX_TOKEN}" (the scheme in any case); the mock accepts it too, so
a frontend switches between mock and sandbox by host and port only. Any other token is a key the
server never issued: the real 401 with error="invalid_token". No Authorization header, or one of
another form ("Basic ...", "Bearer" alone, "Bearer a b"), gets the real 401 Error with its
WWW-Authenticate challenge. The key store is not used (\`npm run keys\` does not apply).

Reset: POST ${SANDBOX_RESET_PATH} (outside /v1, no key needed, callable from any origin) deletes
every pet and stores the seeds again; ids start again after the seeds'. It answers
200 {"reset":true,"pets":<count>}. Or stop and start the sandbox.

CORS is open to every origin (CORS_ORIGINS=*), and every response is checked against the contract
(a response that breaks it is a 500 and a logged "response breaks the contract").

Never production: every response carries "${SANDBOX_HEADER}: true", the start banner says SANDBOX,
and the sandbox refuses to start when NODE_ENV=production or DATABASE_URL is set. Only this
script turns sandbox mode on; \`npm start\` reads no setting that does, and its bundle
(dist/server/server.mjs) holds none of the sandbox's code.
Environment: LOG_LEVEL (default info), HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS as for the server;
DEPRECATION_BROWNOUTS to rehearse a brownout (deprecated operations answer 410 inside its windows).
Ctrl-C (or SIGTERM) stops it, deletes the temp folder, and exits 0.`;

const options = commandLine(HELP, { port: { type: 'string' }, host: { type: 'string' } });

// ---- Never in production, never on a real database.
if (process.env.NODE_ENV === 'production') {
  fail('Refusing to start the sandbox: NODE_ENV=production. The sandbox accepts a published key and throws its data away; run `npm start` for a real server.', 2);
}
if (process.env.DATABASE_URL) {
  fail('Refusing to start the sandbox: DATABASE_URL is set. The sandbox only ever uses a throwaway SQLite file; unset DATABASE_URL (or run `npm start` for a real server).', 2);
}

// ---- Seeds, from the contract's examples.
function isPet(value: unknown): value is Pet {
  return isNode(value) && typeof value.id === 'number' && typeof value.name === 'string' && typeof value.categoryId === 'number' && typeof value.status === 'string';
}

/** The JSON media type of an operation's 200 response or request body, in the dereferenced contract. */
function jsonMedia(document: Node, operationId: string, where: 'response' | 'request'): Node {
  for (const { operation } of operationsOf(document)) {
    if (operation.operationId !== operationId) continue;
    const holder = where === 'request' ? operation.requestBody : isNode(operation.responses) ? operation.responses['200'] : undefined;
    const media = isNode(holder) && isNode(holder.content) ? holder.content['application/json'] : undefined;
    if (isNode(media)) return media;
  }
  throw new Error(`the contract has no JSON ${where} for ${operationId}`);
}

/** The example values of a media type: `example` and `examples.*.value`. */
function exampleValues(media: Node): unknown[] {
  const values: unknown[] = 'example' in media ? [media.example] : [];
  for (const example of Object.values(isNode(media.examples) ? media.examples : {})) if (isNode(example) && 'value' in example) values.push(example.value);
  return values;
}

/**
 * The pets of listPets' 200 examples, by id (the same id twice must be the same pet), then the
 * createPet request examples, with the schema's defaults applied, that are not among them.
 * `$ref`s are resolved by the project's one resolver, json-schema-ref-parser.
 */
async function seedsFrom(contract: OpenApiDocument): Promise<SandboxSeeds> {
  const document = (await new $RefParser().dereference(structuredClone(contract), { resolve: { external: false } })) as Node;
  const byId = new Map<number, Pet>();
  for (const page of exampleValues(jsonMedia(document, 'listPets', 'response'))) {
    for (const pet of Array.isArray(page) ? page : []) {
      if (!isPet(pet)) throw new Error(`a listPets 200 example holds something that is not a Pet: ${JSON.stringify(pet)}`);
      const seen = byId.get(pet.id);
      if (seen && JSON.stringify(seen) !== JSON.stringify(pet)) throw new Error(`listPets examples disagree about pet ${pet.id}`);
      byId.set(pet.id, { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status });
    }
  }
  const pets = [...byId.values()].sort((a, b) => a.id - b.id);

  const media = jsonMedia(document, 'createPet', 'request');
  const properties = isNode(media.schema) && isNode(media.schema.properties) ? media.schema.properties : {};
  const defaults: Node = {};
  for (const [name, property] of Object.entries(properties)) if (isNode(property) && 'default' in property) defaults[name] = property.default;
  const created: NewPetRecord[] = [];
  for (const example of exampleValues(media)) {
    const pet = { ...defaults, ...(isNode(example) ? example : {}) } as NewPetRecord;
    const same = (other: NewPetRecord) => other.name === pet.name && other.categoryId === pet.categoryId && other.status === pet.status;
    if (!pets.some(same) && !created.some(same)) created.push({ name: pet.name, categoryId: pet.categoryId, status: pet.status });
  }
  return { pets, created };
}

// ---- Start.
const showStacks = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
/** A store that cannot be made or opened: one line (where, and the likely cause), the stack only with LOG_LEVEL=debug or trace. */
function storeFailure(error: unknown, where: string): string | undefined {
  const line = explainDatabaseError(error, where);
  if (line !== undefined && showStacks) console.error(error);
  return line;
}
let folder: string;
try {
  folder = mkdtempSync(join(tmpdir(), 'animal-store-sandbox-'));
} catch (error) {
  fail(storeFailure(error, join(tmpdir(), 'animal-store-sandbox-…')) ?? `Cannot create the sandbox's temp folder in ${tmpdir()}: ${String(error)}`);
}
const sqlitePath = join(folder, 'sandbox.sqlite');
const removeStore = () => rmSync(folder, { recursive: true, force: true });
// However the process ends (a crash included), the temp folder goes with it.
process.on('exit', removeStore);

let config: Config;
try {
  config = loadConfig({
    NODE_ENV: 'development',
    PORT: options.port ?? String(DEFAULT_PORT),
    HOST: options.host ?? DEFAULT_HOST,
    SQLITE_PATH: sqlitePath,
    CORS_ORIGINS: '*',
    LOG_LEVEL: process.env.LOG_LEVEL,
    HEADERS_TIMEOUT_MS: process.env.HEADERS_TIMEOUT_MS,
    REQUEST_TIMEOUT_MS: process.env.REQUEST_TIMEOUT_MS,
    DEPRECATION_BROWNOUTS: process.env.DEPRECATION_BROWNOUTS,
    // Its events go to receivers on this machine (`npm run webhooks -- listen --sandbox`).
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOKS_RETRY_SCHEDULE: process.env.WEBHOOKS_RETRY_SCHEDULE,
    // A spec with oauth2 or openIdConnect schemes starts here too: the issuer given, else one that
    // never answers (its tokens unchecked, a 503); the sandbox's key works either way.
    OAUTH_ISSUER: process.env.OAUTH_ISSUER || 'https://issuer.invalid',
    OAUTH_AUDIENCE: process.env.OAUTH_AUDIENCE || 'sandbox',
  });
} catch (error) {
  if (error instanceof ConfigError) fail(`Configuration error: ${error.message.replace(/^PORT/, '--port').replace(/^HOST/, '--host')}`, 2);
  throw error;
}
const logger = createLogger(config.logLevel);

let database: DatabaseHandle | undefined;
async function start(): Promise<RunningServer> {
  const seeds = await seedsFrom(loadBundledSpec());
  const opened = await openSqlite(sqlitePath);
  database = opened;
  const store = createSandboxStore(opened, seeds);
  await store.reset();
  const endpoints = createEndpointStore(opened.db);
  // A receiver on the developer's machine is the point here: loopback and http are allowed (as WEBHOOKS_ALLOW_PRIVATE does).
  const subscribe = async (url: string, events: string[] | undefined) => {
    try {
      checkEndpointUrl(url, { allowPrivate: true });
    } catch (error) {
      if (error instanceof EndpointRefused) return { refused: error.message };
      throw error;
    }
    return endpoints.add(url, events);
  };
  return startServer({
    config,
    logger,
    database: opened,
    bootstrapKey: false,
    keyChecker: sandboxToken,
    arrangeStages: withSandbox({ reset: () => store.reset(), subscribe, unsubscribe: (id) => endpoints.remove(id), logger }),
  });
}
const starting = start();
// Before the port answers: a SIGTERM sent as soon as it does must find the handler (see src/main.ts).
exitOnSignals(logger, {
  stop: async () => {
    await (await starting).close();
    await database?.close();
  },
  afterwards: removeStore,
  messages: { stopping: 'sandbox shutting down', stopped: 'sandbox stopped; its data is deleted', failed: 'sandbox shutdown failed' },
});
let server: RunningServer;
try {
  server = await starting;
} catch (error) {
  const line = storeFailure(error, sqlitePath);
  if (line === undefined) logger.fatal({ err: error }, 'could not start the sandbox');
  else logger.fatal({ database: sqlitePath }, line);
  await database?.close().catch(() => undefined);
  removeStore();
  process.exit(1);
}

const origin = server.origin.replace('127.0.0.1', 'localhost');
const base = `${origin}${server.basePath}`;
logger.info({ url: base, data: sqlitePath, sandbox: true }, 'sandbox listening');
process.stdout.write(
  [
    `SANDBOX: Animal Store API (throwaway data, key "${SANDBOX_TOKEN}"; not a production server) on ${base}`,
    `  docs:     ${origin}/docs   contract: ${origin}/openapi.json`,
    `  data:     ${sqlitePath} (deleted on exit), seeded from the contract's examples`,
    `  reset:    curl -X POST ${origin}${SANDBOX_RESET_PATH}`,
    `  try:      curl -H "Authorization: Bearer ${SANDBOX_TOKEN}" ${base}/pets`,
    `  every response carries ${SANDBOX_HEADER}: true; CORS is open to every origin.`,
    ...(['127.0.0.1', '::1', 'localhost'].includes(config.host) ? [] : [`  WARNING: bound to ${config.host}, not this machine only: anyone who can reach it gets in with the published key.`]),
    '',
  ].join('\n'),
);

