/**
 * Webhooks from the spec (contract 1.4.0: petCreated, petUpdated, petDeleted), on each store, to
 * receivers of the test's own (test/support/receiver.ts): an event is stored exactly when its
 * change commits and reaches every subscribed receiver, signed as Standard Webhooks says, at least
 * once and under one `webhook-id`, through a receiver's failures (500s, slowness past the timeout,
 * a restart), until it says 410. Faster retries than production's (WEBHOOKS_RETRY_SCHEDULE) keep
 * the tests short; the schedule itself is checked in the quick suite.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.js';
import { verifyWebhook, type WebhookEvent } from '../../client/index.js';
import { createDeliveryQueries } from '../../src/features/webhooks/deliveries.js';
import { createEndpointStore } from '../../src/features/webhooks/endpoints.js';
import { createLogger } from '../../src/shared/logger.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { openStores } from '../../generated/stores.js';
import { inUnitOfWork } from '../../src/store/queries/unitOfWork.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { openPostgres } from '../../src/store/database.js';
import { createScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { startPgbouncer } from '../../scripts/lib/pgbouncer.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, targets, testConfig, type TestServer } from '../support/server.js';

/** Retries within a second, an answer within half of one, the outbox read every 100 ms. */
const FAST = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE: '0.1,0.2,0.3,0.4,0.5,0.5,0.5,0.5', WEBHOOKS_POLL_MS: '100', WEBHOOKS_TIMEOUT_MS: '500' };

/** The Animal Store's events: those of WebhookEvent told apart by `type` (a webhook a user's spec adds may have none). */
type PetEvent = Extract<WebhookEvent, { type: string }>;

const json = (body: unknown) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const patch = (body: unknown, ifMatch?: string) => ({ method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json', ...(ifMatch ? { 'If-Match': ifMatch } : {}) }, body: JSON.stringify(body) });

async function created(t: TestServer, name: string, init: RequestInit = json({ name, categoryId: 2 })): Promise<{ id: number }> {
  const response = await t.request('/pets', init);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: number };
}

/** The events of the outbox, oldest first. */
async function outbox(t: TestServer): Promise<Array<{ id: string; name: string; body: unknown }>> {
  const { rows } = await sql<{ id: string; name: string; body: string }>`select id, name, body from webhook_events order by seq`.execute(t.server.database.db);
  return rows.map((row) => ({ id: row.id, name: row.name, body: JSON.parse(row.body) as unknown }));
}

describe.each(targets)('webhooks [%s]', (target) => {
  let t: TestServer;
  let receiver: Receiver;
  let secret: string;
  let endpointId: number;
  const endpoints = () => createEndpointStore(t.server.database.db);
  const verified = (index: number): PetEvent => {
    const delivery = receiver.deliveries[index];
    if (!delivery) throw new Error(`no delivery ${index}`);
    const event = verifyWebhook(secret, delivery.headers as Record<string, string>, delivery.body);
    if (typeof (event as { type?: unknown }).type !== 'string') throw new Error('not an event with a type');
    return event as PetEvent;
  };

  beforeAll(async () => {
    t = await startTestServer(target, { env: FAST }, { inProcess: true });
    receiver = await startReceiver();
    ({ id: endpointId, secret } = await endpoints().add(receiver.url, undefined));
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });
  afterEach(async () => {
    receiver.answer = () => ({ status: 204 });
    await receiver.up().catch(() => undefined);
    expect(t.server.violations.splice(0), 'responses that broke the contract').toEqual([]);
  });

  it('an animal created, changed and removed reaches the receiver as three verified deliveries, each with its own webhook-id', async () => {
    const before = receiver.deliveries.length;
    const pet = await created(t, 'Biscuit');
    const changed = await t.request(`/pets/${pet.id}`, patch({ status: 'sold' }));
    expect(changed.status).toBe(200);
    expect((await t.request(`/pets/${pet.id}`, { method: 'DELETE' })).status).toBe(204);
    await receiver.until((all) => all.length >= before + 3);
    const events = [before, before + 1, before + 2].map(verified);
    expect(events.map((event) => event.type).sort()).toEqual(['pet.created', 'pet.deleted', 'pet.updated']);
    expect(events.find((event) => event.type === 'pet.created')?.data).toEqual({ id: pet.id, name: 'Biscuit', categoryId: 2, status: 'available' });
    expect(events.find((event) => event.type === 'pet.updated')?.data).toEqual({ pet: { id: pet.id, name: 'Biscuit', categoryId: 2, status: 'sold' }, changed: ['status'] });
    expect(events.find((event) => event.type === 'pet.deleted')?.data).toEqual({ id: pet.id });
    const ids = receiver.deliveries.slice(before).map((delivery) => delivery.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-Z]{26}$/);
    // Nothing of it on the request's answer: the JSON the receiver got is the contract's.
    expect(receiver.deliveries[before]?.headers['content-type']).toBe('application/json');
  });

  it('concurrent creates (one group commit) each store one event with their own animal, and a form with a photo emits too', async () => {
    const before = (await outbox(t)).length;
    const pets = await Promise.all(Array.from({ length: 40 }, (_, i) => created(t, `Batch ${i}`)));
    const form = new FormData();
    form.append('name', 'Framed');
    form.append('categoryId', '3');
    form.append('photo', new Blob([Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4b50000000049454e44ae426082', 'hex')], { type: 'image/png' }), 'p.png');
    const framed = await created(t, 'Framed', { method: 'POST', body: form });
    const events = (await outbox(t)).slice(before);
    expect(events.map((event) => event.name)).toEqual(Array(41).fill('petCreated'));
    const announced = events.map((event) => (event.body as { data: { id: number } }).data.id).sort((a, b) => a - b);
    expect(announced).toEqual([...pets.map((pet) => pet.id), framed.id].sort((a, b) => a - b));
    await receiver.until((all) => [...pets, framed].every((pet) => all.some((d) => d.body.includes(`"id":${pet.id},`))));
  });

  it('no event without its change: a 412, a 404 and a rolled-back unit store none; an exactly-once replay emits nothing again', async () => {
    const pet = await created(t, 'Guarded');
    const before = (await outbox(t)).length;
    expect((await t.request(`/pets/${pet.id}`, patch({ status: 'sold' }, '"stale"'))).status).toBe(412);
    expect((await t.request(`/pets/${pet.id}`, { method: 'DELETE', headers: { 'If-Match': '"stale"' } })).status).toBe(412);
    expect((await t.request('/pets/987654321', { method: 'DELETE' })).status).toBe(404);
    expect((await t.request('/pets/987654321', patch({ status: 'sold' }))).status).toBe(404);
    const stores = openStores({ db: t.server.database.db, dialect: t.server.database.dialect, document: loadBundledSpec() });
    await expect(
      inUnitOfWork(t.server.database.db, async () => {
        await stores.webhooks.emit('petDeleted', { type: 'pet.deleted', timestamp: new Date().toISOString(), data: { id: pet.id } });
        throw new Error('the change failed after its emit');
      }),
    ).rejects.toThrow('the change failed');
    expect((await outbox(t)).length).toBe(before);
    const once = { ...json({ name: 'Once', categoryId: 1 }), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `webhooks-${target}-once` } };
    const first = await t.request('/pets', once);
    const replayed = await t.request('/pets', once);
    expect([first.status, replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect((await outbox(t)).slice(before).map((event) => event.name)).toEqual(['petCreated']);
  });

  it('an emit outside a unit of work, of a webhook the spec lacks, or with a body not the spec declares is a wiring bug, thrown', async () => {
    const { webhooks } = openStores({ db: t.server.database.db, dialect: t.server.database.dialect, document: loadBundledSpec() });
    const body = { type: 'pet.deleted' as const, timestamp: new Date().toISOString(), data: { id: 1 } };
    await expect(webhooks.emit('petDeleted', body)).rejects.toThrow(/outside a unit of work/);
    await expect(inUnitOfWork(t.server.database.db, () => webhooks.emit('petAdopted' as 'petDeleted', body))).rejects.toThrow(/declares no webhook petAdopted/);
    await expect(inUnitOfWork(t.server.database.db, () => webhooks.emit('petDeleted', { ...body, data: { id: 'one' } } as unknown as typeof body))).rejects.toThrow(/not the spec's/);
    await expect(inUnitOfWork(t.server.database.db, () => webhooks.emit('petCreated', body as never))).rejects.toThrow(/not the spec's/);
  });

  it('a receiver answering 500, then too slowly, then 204 gets the event a third time under the same webhook-id; the attempts are recorded', async () => {
    // Only this test's animal is answered so (deliveries of earlier tests may still arrive).
    const mine = (body: string) => body.includes('"name":"Persistent"');
    let seen = 0;
    receiver.answer = (delivery) => {
      if (!mine(delivery.body)) return { status: 204 };
      seen += 1;
      return seen === 1 ? { status: 500 } : seen === 2 ? { status: 204, delayMs: 1_500 } : { status: 204 };
    };
    const pet = await created(t, 'Persistent');
    await receiver.until((all) => all.filter((d) => mine(d.body)).length >= 3);
    const ours = receiver.deliveries.filter((d) => mine(d.body));
    const ids = ours.map((delivery) => delivery.id);
    expect(new Set(ids).size).toBe(1);
    expect(verified(receiver.deliveries.indexOf(ours[2] as (typeof ours)[number]))).toMatchObject({ type: 'pet.created', data: { id: pet.id } });
    const attemptsOf = async () => ((await endpoints().attempts(endpointId, 50)) ?? []).filter((attempt) => attempt.eventId === ids[0]).reverse();
    await expect.poll(async () => (await attemptsOf()).length).toBe(3);
    expect((await attemptsOf()).map((attempt) => [attempt.status ?? null, attempt.error === undefined ? null : /timed out/.test(attempt.error) ? 'timed out' : attempt.error])).toEqual([
      [500, 'the receiver answered 500'],
      [null, 'timed out'],
      [204, null],
    ]);
  });

  it('a receiver down for a while gets every event once it is up again', async () => {
    await receiver.down();
    const pets = await Promise.all(Array.from({ length: 5 }, (_, i) => created(t, `While down ${i}`)));
    // Several attempts are refused while it is down (the schedule retries within a second).
    await new Promise((resolve) => setTimeout(resolve, 700));
    const before = receiver.deliveries.length;
    await receiver.up();
    await receiver.until((all) => pets.every((pet) => all.slice(before).some((d) => d.body.includes(`"id":${pet.id},`))));
    const { pending } = (await endpoints().list()).find((endpoint) => endpoint.id === endpointId) ?? { pending: -1 };
    await expect.poll(async () => (await endpoints().list()).find((endpoint) => endpoint.id === endpointId)?.pending).toBe(0);
    expect(pending).toBeGreaterThanOrEqual(0);
  });

  it('a rotated secret: both sign for a day, so a receiver verifies with either', async () => {
    const old = secret;
    const rotated = await endpoints().rotate(endpointId);
    if (rotated === undefined) throw new Error('no endpoint to rotate');
    const before = receiver.deliveries.length;
    await created(t, 'Rotated');
    await receiver.until((all) => all.length > before);
    const delivery = receiver.deliveries[before];
    expect(delivery?.signature.split(' ')).toHaveLength(2);
    for (const key of [old, rotated]) expect(verifyWebhook(key, delivery?.headers as Record<string, string>, delivery?.body ?? '')).toMatchObject({ type: 'pet.created' });
    secret = rotated;
  });

  it('events past their retention go with their deliveries and attempts once every delivery is settled; a pending one stays', async () => {
    await receiver.down();
    const held = await created(t, 'Still pending');
    // Every delivery made so far is settled; the new one waits for the receiver.
    await expect.poll(async () => (await endpoints().list()).find((endpoint) => endpoint.id === endpointId)?.pending, { timeout: 10_000 }).toBe(1);
    const queries = createDeliveryQueries(t.server.database);
    const before = (await outbox(t)).length;
    let purged = 0;
    for (let n = -1; n !== 0; purged += n) n = await queries.purge(Date.now() + 1, 7);
    expect(purged).toBe(before - 1);
    expect((await outbox(t)).map((event) => (event.body as { data: { id?: number } }).data.id)).toEqual([held.id]);
    const [kept] = await outbox(t);
    const attempts = (await endpoints().attempts(endpointId, 100)) ?? [];
    expect(attempts.filter((attempt) => attempt.eventId !== kept?.id)).toEqual([]);
    await receiver.up();
    await receiver.until((all) => all.some((d) => d.body.includes(`"id":${held.id},`)));
  });

  it("the dispatcher's transactions commit without waiting for the disk, roll back whole, and leave every other commit durable", async () => {
    const { database } = t.server;
    const level = async (on: Kysely<Database> = database.db) =>
      database.dialect === 'sqlite' ? String((await sql<{ synchronous: number }>`pragma synchronous`.execute(on)).rows[0]?.synchronous) : String((await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(on)).rows[0]?.synchronous_commit);
    const durable = database.dialect === 'sqlite' ? '2' : 'on';
    expect(await level()).toBe(durable);
    expect(await database.transactionWithoutFsync((trx) => level(trx))).toBe(database.dialect === 'sqlite' ? '1' : 'off');
    expect(await level()).toBe(durable);
    const failure = new Error('the work failed');
    await expect(
      database.transactionWithoutFsync(async (trx) => {
        await sql`update webhook_endpoints set url = 'http://examples.invalid/' where id = ${endpointId}`.execute(trx);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await endpoints().list()).find((endpoint) => endpoint.id === endpointId)?.url).not.toBe('http://examples.invalid/');
    expect(await level()).toBe(durable);
    // A write of a handler's, asked for while one is open, waits for it and commits durably.
    const [, seen] = await Promise.all([database.transactionWithoutFsync(() => new Promise((resolve) => setTimeout(resolve, 50))), inUnitOfWork(database.db, () => level())]);
    expect(seen).toBe(durable);
  });

  it('a receiver answering 410 is disabled at once: nothing more is sent to it, and list says why', async () => {
    const gone = await startReceiver(() => ({ status: 410 }));
    try {
      const { id } = await endpoints().add(gone.url, ['petCreated']);
      await created(t, 'Unwanted');
      await gone.until((all) => all.length === 1);
      await expect.poll(async () => (await endpoints().list()).find((endpoint) => endpoint.id === id)?.disabled?.reason).toBe('the receiver answered 410 Gone');
      await created(t, 'Unwanted too');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(gone.deliveries).toHaveLength(1);
    } finally {
      await gone.close();
    }
  });
});

describe('webhooks: safe by default [sqlite]', () => {
  it('a loopback endpoint gets nothing from a server without WEBHOOKS_ALLOW_PRIVATE: each attempt is refused and recorded', async () => {
    const t = await startTestServer('sqlite', { env: { WEBHOOKS_RETRY_SCHEDULE: '0.1', WEBHOOKS_POLL_MS: '100' } }, { inProcess: true });
    const receiver = await startReceiver();
    try {
      const endpoints = createEndpointStore(t.server.database.db);
      // Stored directly: `npm run webhooks -- add` refuses it too (test/processes/webhooksCli.test.ts).
      const { id } = await endpoints.add(receiver.url, undefined);
      await created(t, 'Private');
      await expect.poll(async () => (await endpoints.attempts(id, 5))?.length, { timeout: 10_000 }).toBe(2);
      const attempts = (await endpoints.attempts(id, 5)) ?? [];
      expect(attempts.map((attempt) => attempt.error)).toEqual([expect.stringMatching(/plain http/), expect.stringMatching(/plain http/)]);
      expect(receiver.deliveries).toEqual([]);
      expect((await endpoints.list())[0]?.pending).toBe(0);
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});

const postgresUrl = process.env.DATABASE_URL;
describe.each(targets.filter((target) => target === 'postgres' || target === 'pgbouncer'))('webhooks: two instances on one database [%s]', (target) => {
  it('every event is delivered, each under one webhook-id, whichever instance committed or claimed it', async () => {
    if (!postgresUrl) throw new Error('DATABASE_URL is not set');
    const scratch = await createScratchDatabase(postgresUrl, 'webhooks');
    const pooler = target === 'pgbouncer' ? await startPgbouncer(postgresUrl) : undefined;
    const open = () => openPostgres(pooler ? { connection: pooler.through(scratch.url), preparedStatements: false } : { connection: scratch.url });
    const receiver = await startReceiver();
    const servers: RunningServer[] = [];
    try {
      const config = testConfig({ env: FAST });
      for (let i = 0; i < 2; i++) servers.push(await startServer({ config, logger: createLogger('silent'), database: await open(), bootstrapKey: false }));
      const [a, b] = servers as [RunningServer, RunningServer];
      await createEndpointStore(a.database.db).add(receiver.url, undefined);
      const { key } = await a.keys.create('two instances');
      for (const server of servers) await server.keyCache.refresh();
      const create = (server: RunningServer, i: number) =>
        fetch(`${server.origin}${server.basePath}/pets`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: `Pet ${i}`, categoryId: 1 }) }).then(async (response) => {
          expect(response.status).toBe(201);
          return ((await response.json()) as { id: number }).id;
        });
      const ids = await Promise.all(Array.from({ length: 120 }, (_, i) => create(i % 2 === 0 ? a : b, i)));
      await receiver.until((all) => new Set(all.map((d) => d.id)).size >= ids.length, 30_000);
      const byId = new Map<string, string>();
      for (const delivery of receiver.deliveries) {
        const body = byId.get(delivery.id);
        // A duplicate (a claim that outlived its lease) carries the same id and the same event.
        if (body !== undefined) expect(delivery.body).toBe(body);
        byId.set(delivery.id, delivery.body);
      }
      const announced = [...byId.values()].map((body) => (JSON.parse(body) as { data: { id: number } }).data.id).sort((x, y) => x - y);
      expect(announced).toEqual([...ids].sort((x, y) => x - y));
      console.info(`[${target}] two instances: ${ids.length} events, ${receiver.deliveries.length} deliveries`);
    } finally {
      for (const server of servers) {
        await server.close();
        await server.database.close();
      }
      await receiver.close();
      await pooler?.stop();
      await scratch.drop();
    }
  }, 120_000);
});
