/**
 * Exactly-once from the spec alone (issue 38, item 3): a made-up resource whose operations
 * declare the spec's `IdempotencyKey` parameter, with handlers that do nothing about it, gets the
 * guarantee createPet has: a retry replays the first answer (status, headers, body, a binary one
 * too) and runs nothing; another request with the key is a 422; concurrent retries run the
 * handler once; a key is per operation; a handler that fails leaves no record; a replay of a
 * conditional read is tagged, answered 304 and ranged as a fresh answer is. And the keys
 * 1.2.0 recorded (createPet's own table) replay after the migration. In process: nothing here is
 * about the socket (src/features/exactlyOnce/idempotency.storage.test.ts drives createPet over one, on every storage target).
 */
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../generated/handlers.js';
import { migrations } from '../../../generated/migrations.js';
import type { Handlers } from '../../domain/contract.js';
import { BinaryBody } from '../../shared/schemas.js';
import { loadBundledSpec, type OpenApiDocument } from '../../shared/spec.js';
import { injectable, type Injectable } from '../../../test/support/inject.js';

const keyed = { $ref: '#/components/parameters/IdempotencyKey' };
const replayedHeader = { description: 'A replay.', required: false, schema: { type: 'string', enum: ['true'] } };
const common = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '409': { $ref: '#/components/responses/IdempotencyKeyInUse' },
  '422': { $ref: '#/components/responses/IdempotencyKeyReused' },
  default: { $ref: '#/components/responses/UnexpectedError' },
};
const KeyedOrderExample = { type: 'object', additionalProperties: false, required: ['id', 'petId', 'quantity'], properties: { id: { type: 'integer' }, petId: { type: 'integer' }, quantity: { type: 'integer' } } };

/**
 * The working contract plus a resource nobody wrote exactly-once code for: orders, and a receipt
 * image per order. Under the tests' made-up names (operationIds ending in `Example`, paths under
 * `/examples/`, tables named `examples_…`; docs/contract.md), each one this file's own, so a spec
 * that has orders of its own (the Swagger Petstore's `placeOrder`, an `orders` table: the README's
 * resource recipe) still passes, and so do the fixtures pasted beside it in a copy
 * (test/fixtures/resource-recipe/orders.yaml's `placeOrderExample`).
 */
function withKeyedOrderExamples(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown> };
  document.paths['/examples/keyed-orders'] = {
    post: {
      operationId: 'placeKeyedOrderExample',
      summary: 'Place an order',
      tags: ['Pets'],
      parameters: [{ ...keyed }],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', additionalProperties: false, required: ['petId'], properties: { petId: { type: 'integer' }, quantity: { type: 'integer', minimum: 1, default: 1 } } } } },
      },
      responses: { '201': { description: 'Placed.', headers: { Location: { description: 'Where the order is.', required: true, schema: { type: 'string', pattern: '^/v1/examples/keyed-orders/[1-9][0-9]*$' } }, 'Idempotent-Replayed': replayedHeader }, content: { 'application/json': { schema: KeyedOrderExample } } }, ...structuredClone(common) },
    },
  };
  document.paths['/examples/keyed-orders/{orderId}/receipt'] = {
    put: {
      operationId: 'printKeyedReceiptExample',
      summary: 'Print a receipt',
      tags: ['Pets'],
      parameters: [{ ...keyed }, { name: 'orderId', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { '200': { description: 'The receipt.', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } }, ...structuredClone(common) },
    },
    // A read with a key, conditional and in ranges: exactly-once sits inside those stages.
    get: {
      operationId: 'getKeyedReceiptExample',
      summary: 'Read a receipt',
      tags: ['Pets'],
      parameters: [{ ...keyed }, { name: 'orderId', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: {
        '200': { description: 'The receipt.', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Accept-Ranges': { $ref: '#/components/headers/Accept-Ranges' } }, content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
        '206': { description: 'Its part.', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Accept-Ranges': { $ref: '#/components/headers/Accept-Ranges' }, 'Content-Range': { $ref: '#/components/headers/Content-Range' } }, content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
        '304': { description: 'Unchanged.', headers: { ETag: { $ref: '#/components/headers/ETag' } } },
        '416': { $ref: '#/components/responses/RangeNotSatisfiable' },
        ...structuredClone(common),
      },
    },
  };
  return document as unknown as OpenApiDocument;
}

let t: Injectable;
let placed = 0;
let printed = 0;
let read = 0;
let failNext = false;

beforeAll(async () => {
  const mine = {
    // Handlers that write and answer, knowing nothing of keys.
    placeKeyedOrderExample: async ({ body }: { body: { petId: number; quantity: number } }) => {
      placed += 1;
      if (failNext) {
        failNext = false;
        throw new Error('the order could not be placed');
      }
      await sql`insert into examples_keyed_orders (pet_id, quantity) values (${body.petId}, ${body.quantity})`.execute(t.database.db);
      const { rows } = await sql<{ id: number }>`select max(id) as id from examples_keyed_orders`.execute(t.database.db);
      const id = Number(rows[0]?.id);
      return { status: 201, body: { id, petId: body.petId, quantity: body.quantity }, headers: { Location: `/v1/examples/keyed-orders/${id}` } };
    },
    printKeyedReceiptExample: async ({ path }: { path: { orderId: number } }) => {
      printed += 1;
      return { status: 200, body: new BinaryBody(Buffer.from([0x89, 0x50, 0x4e, 0x47, path.orderId, printed]), 'image/png') };
    },
    // Bytes that change with every run: a replay's tag is the first answer's only if nothing ran again.
    getKeyedReceiptExample: async ({ path }: { path: { orderId: number } }) => {
      read += 1;
      return { status: 200, body: new BinaryBody(Buffer.from([0x89, 0x50, 0x4e, 0x47, path.orderId, read, 0, 0]), 'image/png') };
    },
  };
  t = await injectable({ document: withKeyedOrderExamples(), handlers: { ...handlers, ...mine } as unknown as Handlers });
  await sql`create table examples_keyed_orders (id integer primary key autoincrement, pet_id integer not null, quantity integer not null)`.execute(t.database.db);
});
afterAll(() => t.close());

const place = (key: string | undefined, body: unknown) =>
  t.inject({ method: 'POST', url: '/v1/examples/keyed-orders', payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) } });
const orderCount = async () => Number((await sql<{ n: number }>`select count(*) as n from examples_keyed_orders`.execute(t.database.db)).rows[0]?.n);

describe('an operation that declares Idempotency-Key is exactly-once without its handler doing anything', () => {
  it('a retry replays the first 201 (body, Location, Idempotent-Replayed) and runs nothing', async () => {
    const before = { placed, orders: await orderCount() };
    const first = await place('order-1', { petId: 1, quantity: 2 });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await place('order-1', { quantity: 2, petId: 1 });
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect({ placed, orders: await orderCount() }).toEqual({ placed: before.placed + 1, orders: before.orders + 1 });
  });

  it('compares requests after defaults: quantity omitted equals its default 1', async () => {
    const first = await place('order-default', { petId: 3 });
    const again = await place('order-default', { petId: 3, quantity: 1 });
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.body).toBe(first.body);
  });

  it('the same key with another request is a 422 idempotency_key_reused, and nothing runs', async () => {
    await place('order-2', { petId: 1 });
    const runs = placed;
    const other = await place('order-2', { petId: 2 });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(placed).toBe(runs);
  });

  it('8 concurrent requests with one key run the handler once: one order; the rest replay it or get a 409', async () => {
    const runs = placed;
    const orders = await orderCount();
    const replies = await Promise.all(Array.from({ length: 8 }, () => place('order-burst', { petId: 4 })));
    expect(placed - runs).toBe(1);
    expect(await orderCount()).toBe(orders + 1);
    const created = replies.filter((r) => r.statusCode === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body)).size).toBe(1);
    for (const r of replies.filter((reply) => reply.statusCode !== 201)) {
      expect(r.statusCode).toBe(409);
      expect(r.headers['retry-after']).toBe('1');
    }
    const after = await place('order-burst', { petId: 4 });
    expect(after.headers['idempotent-replayed']).toBe('true');
  });

  it('a key is per operation: one key on createPet and on placeKeyedOrderExample is two requests, both served', async () => {
    const pet = await t.inject({ method: 'POST', url: '/v1/pets', payload: JSON.stringify({ name: 'Shared key', categoryId: 1 }), headers: { 'content-type': 'application/json', 'idempotency-key': 'shared' } });
    const order = await place('shared', { petId: 1 });
    expect([pet.statusCode, order.statusCode]).toEqual([201, 201]);
    expect(order.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a handler that fails leaves no record: the retry runs it again and is answered', async () => {
    failNext = true;
    const runs = placed;
    const failed = await place('order-fails', { petId: 5 });
    expect(failed.statusCode).toBe(500);
    const retried = await place('order-fails', { petId: 5 });
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(placed - runs).toBe(2);
  });

  it('without the header every request runs the handler', async () => {
    const runs = placed;
    await place(undefined, { petId: 6 });
    await place(undefined, { petId: 6 });
    expect(placed - runs).toBe(2);
  });

  it('a binary answer replays byte for byte with its media type; another path with the key is a 422', async () => {
    const print = (orderId: number) => t.inject({ method: 'PUT', url: `/v1/examples/keyed-orders/${orderId}/receipt`, headers: { 'idempotency-key': 'receipt-1' } });
    const plain = await t.inject({ method: 'PUT', url: '/v1/examples/keyed-orders/7/receipt' });
    expect(plain.statusCode, plain.body).toBe(200);
    const first = await print(7);
    expect(first.statusCode, first.body).toBe(200);
    const runs = printed;
    const again = await print(7);
    expect(again.statusCode).toBe(200);
    expect(again.headers['content-type']).toBe('image/png');
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    // The receipt declares no Idempotent-Replayed: a replay says only what the contract lets it.
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(printed).toBe(runs);
    expect((await print(8)).statusCode).toBe(422);
  });

  it('a replay of a conditional read is tagged, answered 304 and ranged as the first answer was, and runs nothing', async () => {
    const receipt = (headers: Record<string, string> = {}) => t.inject({ method: 'GET', url: '/v1/examples/keyed-orders/9/receipt', headers: { 'idempotency-key': 'receipt-read-1', ...headers } });
    const first = await receipt();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(first.headers['accept-ranges']).toBe('bytes');
    const runs = read;
    const again = await receipt();
    expect(again.statusCode).toBe(200);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['cache-control']).toBe('private, no-cache');
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    const unchanged = await receipt({ 'if-none-match': String(first.headers.etag) });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.rawPayload.length).toBe(0);
    const part = await receipt({ range: 'bytes=4-5', 'if-range': String(first.headers.etag) });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 4-5/${first.rawPayload.length}`);
    expect(part.rawPayload.equals(first.rawPayload.subarray(4, 6))).toBe(true);
    expect((await receipt({ range: 'bytes=99-' })).statusCode).toBe(416);
    expect(read).toBe(runs);
  });
});

describe("the keys 1.2.0 recorded replay after migration 0006", () => {
  /** 1.2.0's fingerprint of a createPet body (its canonical JSON: keys sorted), as 1.2.0 computed it then. */
  const fingerprint120 = (record: { name: string; categoryId: number; status: string }) =>
    hash('sha256', `{"categoryId":${record.categoryId},"name":${JSON.stringify(record.name)},"status":${JSON.stringify(record.status)}}`, 'hex');

  it('a key recorded by createPet before the migration gets the same 201 after it, and another body is a 422', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-migrate-'));
    try {
      const file = join(dir, 'store.sqlite');
      // The database as 1.2.0 left it: migrations up to 0005, a pet and its key's record.
      const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
      const upTo = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= '0005').map(([name, { up }]) => [name, { up: (db: Kysely<unknown>) => up(db, 'sqlite') }]));
      const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => upTo } }).migrateToLatest();
      expect(error).toBeUndefined();
      const record = { name: 'Carried over', categoryId: 4, status: 'available' };
      await sql`insert into pets (id, name, category_id, status, created_at) values (41, ${record.name}, ${record.categoryId}, ${record.status}, '2026-11-30T00:00:00.000Z')`.execute(old);
      const body201 = JSON.stringify({ id: 41, ...record });
      await sql`insert into idempotency_keys (caller, idempotency_key, fingerprint, pet_id, response_body, created_at)
        values ('inject', 'before-1.3', ${fingerprint120(record)}, 41, ${body201}, ${new Date().toISOString()})`.execute(old);
      await old.destroy();

      const migrated = await injectable({ databaseFile: file });
      try {
        const post = (body: unknown) => migrated.inject({ method: 'POST', url: '/v1/pets', payload: JSON.stringify(body), headers: { 'content-type': 'application/json', 'idempotency-key': 'before-1.3' } });
        const replay = await post({ name: record.name, categoryId: record.categoryId });
        expect(replay.statusCode).toBe(201);
        expect(replay.body).toBe(body201);
        expect(replay.headers.location).toBe('/v1/pets/41');
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect((await post({ name: 'Another', categoryId: 4 })).statusCode).toBe(422);
        const { rows } = await sql<{ n: number }>`select count(*) as n from pets`.execute(migrated.database.db);
        expect(Number(rows[0]?.n)).toBe(1);
      } finally {
        await migrated.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
