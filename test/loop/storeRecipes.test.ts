/**
 * The two recipes that reach the store (docs/architecture.md#recipes), on one copy of the project (one copy, one lint
 * and one run of its quick suite for both: the loop suite's longest steps):
 *
 * - A new resource: the Swagger Petstore's store orders (test/fixtures/resource-recipe/orders.yaml,
 *   under made-up …Example names) pasted into the spec as lint wants them, `npm run generate` (a
 *   stub per operation, in the handler map); one resource module
 *   (src/store/resources/orderExamples.ts: its table type and queries, for both dialects) and one migration file,
 *   `npm run generate` again (it lists both), and two of the four handlers written (the other two
 *   stay 501 stubs).
 * - A new store method: the recipe's example (as deletePet was) under made-up names no spec will plausibly take
 *   (`retirePetExample`, DELETE /retire-pet-example/{petId}, store method `retireExample`: 204, or
 *   404 when there is no such animal), the method in the one file the recipe names, the pets'
 *   store module (its `PetStore` interface and its implementation).
 *
 * The same copy also gets test/loop/spec-loop.test.ts's pasted operations (test/support/
 * specFragments.ts), as stubs: one quick-suite run covers them too.
 *
 * Nothing else is edited: the copy's `npm run lint` and quick suite pass (every test that walks
 * the operations reads them from the spec, so stored operations and stubs alike pass it
 * untouched), and its server places and reads orders on SQLite, and on PostgreSQL when
 * DATABASE_URL is set, and retires a pet. Each edit finds its place by structure or by one line
 * that a new field or operation does not move, and names the file and the anchor when it cannot.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { freePort, startProcess, stopProcess, waitForHttp, waitForOutput, type RunningProcess } from '../../scripts/lib/processes.js';
import { copyProject, projectRoot, replaceOnce, runCommand, type CommandResult, type ProjectCopy } from '../support/projectCopy.js';
import { pasteFragments, SPEC_LOOP_FRAGMENTS } from '../support/specFragments.js';

const HOST = '127.0.0.1';
const THIS_FILE = 'test/loop/storeRecipes.test.ts';
const FIXTURE = join(projectRoot, 'test/fixtures/resource-recipe/orders.yaml');
const RESOURCE = 'orderExamples';
const MIGRATION = '9998_order_examples';

type Fragment = { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> }; tags: Array<{ name: string }> };

/** README step 1: the fixture's paths, schemas and tag added to the spec, kept in its formatting. */
function addResource(specText: string): string {
  const doc = parseDocument(specText);
  const fragment = parse(readFileSync(FIXTURE, 'utf8')) as Fragment;
  for (const [path, item] of Object.entries(fragment.paths)) {
    if (doc.hasIn(['paths', path])) throw new Error(`spec/openapi.yaml already has ${path}: pick another made-up path in ${FIXTURE}`);
    doc.setIn(['paths', path], doc.createNode(item));
  }
  for (const [name, schema] of Object.entries(fragment.components.schemas)) {
    if (doc.hasIn(['components', 'schemas', name])) throw new Error(`spec/openapi.yaml already has a schema ${name}: pick another made-up name in ${FIXTURE}`);
    doc.setIn(['components', 'schemas', name], doc.createNode(schema));
  }
  const tags = doc.get('tags');
  if (!tags || typeof tags !== 'object' || !('add' in tags)) throw new Error('spec/openapi.yaml has no top-level tags list');
  for (const tag of fragment.tags) (tags as { add(node: unknown): void }).add(doc.createNode(tag));
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

// The recipe's store module and migration, as a newcomer writes them after reading
// src/store/resources/pets.ts and src/store/migrations/0001_pets.ts.
const STORE = `/** Orders of the store: their table, and the store handlers reach as \`deps.${RESOURCE}\`. */
import type { Generated, Selectable } from 'kysely';
import type { Schemas } from '../../shared/schemas.js';
import type { ResourceContext } from '../resource.js';

type Order = Schemas['OrderExample'];

/** The table of src/store/migrations/${MIGRATION}.ts. */
export type Tables = {
  order_examples: {
    id: Generated<number>;
    pet_id: number;
    quantity: number;
    ship_date: string | null;
    status: Order['status'];
    /** 0 or 1: SQLite has no boolean. */
    complete: number;
    created_at: string;
  };
};

export interface OrderStore {
  place(order: Omit<Order, 'id'>): Promise<Order>;
  get(id: number): Promise<Order | undefined>;
}

function toOrder(row: Selectable<Tables['order_examples']>): Order {
  return { id: row.id, petId: row.pet_id, quantity: row.quantity, ...(row.ship_date === null ? {} : { shipDate: row.ship_date }), status: row.status, complete: row.complete === 1 };
}

export function open({ db: core }: ResourceContext): OrderStore {
  const db = core.withTables<Tables>();
  return {
    async place(order) {
      const values = { pet_id: order.petId, quantity: order.quantity, ship_date: order.shipDate ?? null, status: order.status, complete: order.complete ? 1 : 0, created_at: new Date().toISOString() };
      return toOrder(await db.insertInto('order_examples').values(values).returningAll().executeTakeFirstOrThrow());
    },
    async get(id) {
      const row = await db.selectFrom('order_examples').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toOrder(row);
    },
  };
}
`;

const MIGRATION_FILE = `/** Orders of the store (src/store/resources/${RESOURCE}.ts). */
import { sql } from 'kysely';
import { bigint, idColumn, type MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  await sql\`create table order_examples (
    id \${idColumn(dialect)},
    pet_id \${bigint(dialect)} not null,
    quantity integer not null,
    ship_date text,
    status text not null check (status in ('placed', 'approved', 'delivered')),
    complete integer not null,
    created_at text not null
  )\`.execute(db);
};
`;

const RETIRE = { operationId: 'retirePetExample', path: '/retire-pet-example/{petId}', storeMethod: 'retireExample' };

const RETIRE_OPERATION = {
  delete: {
    operationId: RETIRE.operationId,
    summary: 'Retire an animal',
    description: 'Removes one animal by its identifier. Answers 204 without a body, or 404 when there is no such animal.',
    tags: ['Pets'],
    parameters: [{ $ref: '#/components/parameters/PetId' }],
    responses: {
      '204': { description: 'Retired.' },
      '400': { $ref: '#/components/responses/InvalidPetId' },
      '401': { $ref: '#/components/responses/Unauthorized' },
      '404': { $ref: '#/components/responses/NotFound' },
      '429': { $ref: '#/components/responses/TooManyRequests' },
      '500': { $ref: '#/components/responses/InternalError' },
      default: { $ref: '#/components/responses/UnexpectedError' },
    },
  },
};

/** The store-method recipe's step 1: the operation at the end of `paths`, kept in the spec's own formatting. */
function addRetireOperation(specText: string): string {
  const doc = parseDocument(specText);
  if (doc.hasIn(['paths', RETIRE.path])) throw new Error(`spec/openapi.yaml already has the path ${RETIRE.path}: pick another made-up path in ${THIS_FILE}`);
  if (new RegExp(`operationId:\\s*${RETIRE.operationId}\\b`).test(specText)) throw new Error(`spec/openapi.yaml already has an operation ${RETIRE.operationId}: pick another made-up name in ${THIS_FILE}`);
  doc.setIn(['paths', RETIRE.path], doc.createNode(RETIRE_OPERATION));
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}


/** The store-method recipe: the method in the pets' store module, in its interface and in the object \`open\` returns. */
function addStoreMethod(text: string): string {
  const store = 'src/store/resources/pets.ts';
  if (new RegExp(`\\b${RETIRE.storeMethod}\\(`).test(text)) throw new Error(`${store} already has a ${RETIRE.storeMethod} method: pick another made-up name in ${THIS_FILE}`);
  const declared = replaceOnce(
    text,
    'export interface PetStore {\n',
    `export interface PetStore {\n  /** Removes the animal; false when there was none. */\n  ${RETIRE.storeMethod}(id: number): Promise<boolean>;\n`,
    `${store} (the PetStore interface)`,
  );
  return replaceOnce(
    declared,
    '    async get(id) {\n',
    `    async ${RETIRE.storeMethod}(id) {\n      const result = await db.deleteFrom('pets').where('id', '=', id).executeTakeFirst();\n      return result.numDeletedRows > 0n;\n    },\n\n    async get(id) {\n`,
    `${store} (the store object, at its get method)`,
  );
}

const HANDLERS: Record<string, string> = {
  placeOrderExample: `import type { Handler } from '../src/domain/contract.js';

/** placeOrderExample: POST /examples/store/order. */
export const placeOrderExample: Handler<'placeOrderExample'> = async ({ body }, { ${RESOURCE} }) => {
  const order = await ${RESOURCE}.place({ petId: body.petId, quantity: body.quantity, ...(body.shipDate === undefined ? {} : { shipDate: body.shipDate }), status: body.status ?? 'placed', complete: body.complete ?? false });
  return { status: 201, body: order };
};
`,
  getOrderByIdExample: `import { errorResult, type Handler } from '../src/domain/contract.js';

/** getOrderByIdExample: GET /examples/store/order/{orderId}. */
export const getOrderByIdExample: Handler<'getOrderByIdExample'> = async ({ path }, { ${RESOURCE} }) => {
  const order = await ${RESOURCE}.get(path.orderId);
  if (!order) return errorResult('not_found', \`No order has id \${path.orderId}.\`);
  return { status: 200, body: order };
};
`,
  [RETIRE.operationId]: `import { errorResult, type Handler } from '../src/domain/contract.js';

/** ${RETIRE.operationId}: DELETE ${RETIRE.path}. */
export const ${RETIRE.operationId}: Handler<'${RETIRE.operationId}'> = async ({ path }, { pets }) => {
  if (!(await pets.${RETIRE.storeMethod}(path.petId))) return errorResult('not_found', \`No animal has id \${path.petId}.\`);
  return { status: 204, body: undefined };
};
`,
};

/** The copy's environment for its own commands: none of this run's vitest state. */
function copyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('VITEST') && name !== 'NODE_ENV' && name !== 'TEST_STORAGE') env[name] = value;
  return { ...env, REDIS_URL: '', ...extra };
}

const output = (result: CommandResult) => `exit ${String(result.code)}\n${result.stdout.slice(-20_000)}\n${result.stderr.slice(-20_000)}`;
const generate = (copy: ProjectCopy) => runCommand(copy.bin('tsx'), ['scripts/generate.ts'], { cwd: copy.dir, env: copyEnv() });
const quickSuite = (copy: ProjectCopy) => runCommand('npm', ['test'], { cwd: copy.dir, env: copyEnv({ DATABASE_URL: '' }), timeoutMs: 900_000 });

describe(`the store recipes on one copy: the Petstore's store orders as ${RESOURCE}, and ${RETIRE.operationId} with its store method`, () => {
  let copy: ProjectCopy;
  let stubs: CommandResult;
  let stored: { generate: CommandResult; lint: CommandResult; suite: CommandResult };
  const servers: RunningProcess[] = [];
  let scratch: ScratchDatabase | undefined;

  beforeAll(async () => {
    copy = copyProject('animal-store-resource-recipe-');
    if (copy.read('src/store/resources/pets.ts').length === 0) throw new Error(`${THIS_FILE}: src/store/resources/pets.ts is empty`);
    // 1–3: the spec, then npm run generate: a 501 stub per operation, listed in the handler map.
    // And the spec loop's operations (test/fixtures/spec-loop/: every kind of parameter and body,
    // an answer in bytes, the Swagger Petstore's pet operations), all stubs here: this copy's
    // quick suite is the proof that no test pins what the spec derives (its operations, media
    // types, CORS lists), so an operation pasted with its stub passes \`npm test\` untouched.
    copy.edit('spec/openapi.yaml', (text) => pasteFragments(addRetireOperation(addResource(text)), SPEC_LOOP_FRAGMENTS).text);
    stubs = await generate(copy);
    if (stubs.code !== 0) throw new Error(`npm run generate failed in the copy:\n${output(stubs)}`);
    // The store: one module, one migration; npm run generate lists both; then two handlers.
    copy.write(`src/store/resources/${RESOURCE}.ts`, STORE);
    copy.write(`src/store/migrations/${MIGRATION}.ts`, MIGRATION_FILE);
    copy.edit('src/store/resources/pets.ts', addStoreMethod);
    const second = await generate(copy);
    for (const [operationId, source] of Object.entries(HANDLERS)) copy.write(`handlers/${operationId}.ts`, source);
    const [lint, suite] = await Promise.all([runCommand(copy.bin('tsx'), ['scripts/lint.ts'], { cwd: copy.dir, env: copyEnv(), timeoutMs: 600_000 }), quickSuite(copy)]);
    stored = { generate: second, lint, suite };
  }, 1_800_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => stopProcess(server)));
    await scratch?.drop();
    copy?.remove();
  });

  it('npm run generate scaffolds a 501 stub for each new operation', () => {
    for (const operationId of ['getInventoryExample', 'placeOrderExample', 'getOrderByIdExample', 'deleteOrderExample', RETIRE.operationId]) expect(stubs.stdout).toContain(`handlers/${operationId}.ts`);
  });

  it('with the store module and the migration listed by npm run generate, the store method, three handlers written and the other operations stubs (the spec loop\'s and the Petstore\'s too), npm run lint and the quick suite pass untouched', () => {
    expect(stored.generate.stdout).toMatch(/generated\/stores\.ts[\s\S]*generated\/migrations\.ts/);
    expect(copy.read('generated/stores.ts')).toContain(`${RESOURCE}: ${RESOURCE}.open(context)`);
    expect(stored.lint.code, output(stored.lint)).toBe(0);
    expect(stored.suite.code, output(stored.suite)).toBe(0);
  });

  /** The copy's server (`tsx src/main.ts`) on `env`'s store: its base URL and the first key it printed. */
  async function startCopyServer(env: Record<string, string>): Promise<{ server: RunningProcess; origin: string; key: string }> {
    const port = await freePort(HOST);
    const server = startProcess(copy.bin('tsx'), ['src/main.ts'], { cwd: copy.dir, env: copyEnv({ PORT: String(port), HOST, NODE_ENV: 'test', LOG_LEVEL: 'error', ...env }) });
    servers.push(server);
    await waitForHttp(`http://${HOST}:${port}/healthz`, server);
    // /healthz answers as soon as the server listens; src/main.ts prints the key just after.
    const key = await waitForOutput(server, /^\s*(ask_[A-Za-z0-9_-]{43})\s*$/m);
    return { server, origin: `http://${HOST}:${port}`, key };
  }

  async function placesAndReads(env: Record<string, string>): Promise<void> {
    const { server, origin, key } = await startCopyServer(env);
    const api = `${origin}/v1/examples/store`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const placed = await fetch(`${api}/order`, { method: 'POST', headers, body: JSON.stringify({ petId: 198772, quantity: 7, shipDate: '2026-12-01T10:00:00Z' }) });
    const order = (await placed.json()) as { id: number };
    expect({ status: placed.status, order }).toEqual({ status: 201, order: { id: expect.any(Number), petId: 198772, quantity: 7, shipDate: '2026-12-01T10:00:00Z', status: 'placed', complete: false } });
    const read = await fetch(`${api}/order/${order.id}`, { headers });
    expect({ status: read.status, order: await read.json() }).toEqual({ status: 200, order });
    expect((await fetch(`${api}/order/${order.id + 1000}`, { headers })).status).toBe(404);
    const refused = await fetch(`${api}/order`, { method: 'POST', headers, body: JSON.stringify({ petId: '1', quantity: 7 }) });
    expect(await refused.json()).toMatchObject({ status: 400, code: 'validation_failed', details: [{ in: 'body', field: 'petId' }] });
    expect((await fetch(`${api}/inventory`, { headers })).status).toBe(501);
    // No log line breaks the contract (the server checks its responses in test mode).
    expect(server.output()).not.toMatch(/response breaks the contract/);
  }

  it("the copy's server places and reads orders on SQLite", async () => {
    await placesAndReads({ DATABASE_URL: '', SQLITE_PATH: copy.path('data', 'orders.sqlite') });
  }, 120_000);

  it.skipIf(!process.env.DATABASE_URL)("the copy's server places and reads orders on PostgreSQL (skipped without DATABASE_URL)", async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL ?? '', 'recipe');
    await placesAndReads({ DATABASE_URL: scratch.url });
  }, 120_000);
  it("the copy's server retires: 204, then getPet and a second retire are 404, and the other pets stay", async () => {
    const { server, origin, key } = await startCopyServer({ DATABASE_URL: '', SQLITE_PATH: copy.path('data', 'retire.sqlite') });
    const api = `${origin}/v1`;
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const create = async (name: string) => (await (await fetch(`${api}/pets`, { method: 'POST', headers: auth, body: JSON.stringify({ name, categoryId: 1 }) })).json()) as { id: number };
    const [kept, doomed] = [await create('Kept'), await create('Doomed')];
    const retire = (id: number, headers: Record<string, string>) => fetch(`${api}${RETIRE.path.replace('{petId}', String(id))}`, { method: 'DELETE', headers });
    const deleted = await retire(doomed.id, auth);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await fetch(`${api}/pets/${doomed.id}`, { headers: auth })).status).toBe(404);
    const again = await retire(doomed.id, auth);
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: 'not_found', status: 404 });
    expect((await retire(doomed.id, {})).status).toBe(401);
    const listed = (await (await fetch(`${api}/pets`, { headers: auth })).json()) as { id: number }[];
    expect(listed.map((pet) => pet.id)).toEqual([kept.id]);
    expect(server.output()).not.toMatch(/response breaks the contract/);
  }, 120_000);
});
