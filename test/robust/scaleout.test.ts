/**
 * Scale-out: two instances of the production server (child processes) share one PostgreSQL
 * database, as the scale-out path promises they can (docs/operations.md#scale-out).
 *
 *   - 1,000 creates, IN_FLIGHT at a time, each sent to one instance or the other at random: every
 *     one is answered 201 with the pet that was sent, and no id is handed out twice.
 *   - Paging through either instance (limit=100, following Link rel="next") lists every pet once,
 *     in ascending id order, exactly as acknowledged, and nothing else; a page link minted by one
 *     instance works on the other (the cursor secret is shared through the database); each pet
 *     reads back through the instance that did not create it.
 *   - A key created in the shared database works on both instances; once revoked, both refuse it
 *     within the key refresh interval (KEY_REFRESH_MS) plus one reload; the observed times are
 *     printed.
 *   - Exactly once across instances: each create is sent with the same Idempotency-Key to both
 *     instances at the same moment (a 409 is retried on the other instance after its Retry-After):
 *     each intended pet is stored once, exactly one answer per key is a first create, and both
 *     instances then replay the same id.
 *
 * PostgreSQL only: skipped when DATABASE_URL is not set.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { Agent } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { nextLink, type NewPet, type Pet, type PetStatus } from '../../client/index.js';
import { openPostgres, type DatabaseHandle } from '../../src/store/database.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { isPetAsSent, listAllPets, send, type HttpResponse } from './support/http.js';
import { seededRandom } from './support/random.js';
import { pgbouncerMissing } from '../../scripts/lib/pgbouncer.js';
import { killAll, pgbouncerStore, postgresStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';

const CREATES = 1_000;
/** Creates sent to both instances at once with one Idempotency-Key each. */
const KEYED_CREATES = 300;
/** Keys in flight at once (each on both instances). */
const KEYED_IN_FLIGHT = 32;
/** Bounds on retrying one keyed create after 409s. */
const MAX_TRIES = 20;
/** Requests in flight at once, over both instances. */
const IN_FLIGHT = 64;
/** Each instance reloads its keys this often (passed to both; it is also the default). */
const KEY_REFRESH_MS = 2_000;
/**
 * The promise: a key change reaches every instance within KEY_REFRESH_MS plus one reload (a
 * query of a few ms); this allowance covers that reload and timer lateness on a loaded machine.
 */
const RELOAD_ALLOWANCE_MS = 1_000;
const KEY_BOUND_MS = KEY_REFRESH_MS + RELOAD_ALLOWANCE_MS;
/** How often the key probes ask; part of the measured time's resolution. */
const KEY_POLL_MS = 20;

const postgresUrl = process.env.DATABASE_URL || undefined;
if (!postgresUrl) console.warn('[scale-out] DATABASE_URL is not set: the two-instance scale-out test is skipped.');
const poolerMissing = pgbouncerMissing();
if (postgresUrl && poolerMissing !== undefined) console.warn(`[scale-out] the runs through PgBouncer are skipped: ${poolerMissing}.`);
/** How the instances reach the database: directly, and through one transaction-mode PgBouncer they share. */
const WAYS: Array<[string, (adminUrl: string, prefix: string) => Promise<Store>]> = [['directly', postgresStore], ...(poolerMissing === undefined ? [['through PgBouncer (transaction mode)', pgbouncerStore] as [string, typeof pgbouncerStore]] : [])];

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

function newPet(i: number): NewPet {
  const pet: NewPet = { name: `scale-out #${i}`, categoryId: 1 + ((i * 7) % 60) };
  // Every fifth leaves status out: the stored default must come back as 'available'.
  if (i % 5 !== 4) pet.status = STATUSES[i % 3] as PetStatus;
  return pet;
}

/** Runs `task` over 0..count-1 with at most `width` at once. */
async function pooled(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/**
 * Asks `base` with `key` every KEY_POLL_MS until it answers `status`; the ms since `since`, or
 * undefined if that did not happen within `withinMs`.
 */
async function msUntilStatus(base: string, key: string, status: number, since: number, withinMs: number): Promise<number | undefined> {
  while (Date.now() - since <= withinMs) {
    const response = await send(`${base}/pets?limit=1`, { key, timeoutMs: 10_000 });
    if (response.status === status) return Date.now() - since;
    if (response.status !== 200 && response.status !== 401) throw new Error(`key probe on ${base}: ${response.status} ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, KEY_POLL_MS));
  }
  return undefined;
}

/** One keyed create's answer: the pet, whether it was a replay, and which instances it took. */
interface KeyedAnswer {
  pet: Pet;
  replayed: boolean;
  /** Instances asked, in order ('A', 'B'), 409s included. */
  path: string;
}

/**
 * Posts `body` with `idempotencyKey` to `instances[first]` until a 201, each retry after a 409
 * going to the other instance once the Retry-After has passed. Throws on anything else.
 */
async function createOnce(instances: readonly [ServerProcess, ServerProcess], first: 0 | 1, key: string, body: NewPet, idempotencyKey: string, agents: readonly Agent[]): Promise<KeyedAnswer> {
  let which = first;
  let path = '';
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    path += which === 0 ? 'A' : 'B';
    const response: HttpResponse = await send(`${instances[which].base}/pets`, { method: 'POST', key, body, agent: agents[which], timeoutMs: 30_000, headers: { 'Idempotency-Key': idempotencyKey } });
    if (response.status === 409) {
      await sleep(1_000 * Number(response.headers['retry-after'] ?? 1));
      which = which === 0 ? 1 : 0;
      continue;
    }
    const pet = JSON.parse(response.text) as unknown;
    if (response.status !== 201 || !isPetAsSent(pet, body) || response.headers.location !== `/v1/pets/${pet.id}`) {
      throw new Error(`POST ${JSON.stringify(body)} (Idempotency-Key ${idempotencyKey}) to ${path.at(-1)} → ${response.status} ${response.text.slice(0, 300)}`);
    }
    return { pet, replayed: response.headers['idempotent-replayed'] === 'true', path };
  }
  throw new Error(`POST ${JSON.stringify(body)} (Idempotency-Key ${idempotencyKey}): still 409 after ${MAX_TRIES} tries (${path})`);
}

/** Every pet through `server`, checked against what was acknowledged: each once, in id order, unchanged, nothing else. */
async function checkListing(server: ServerProcess, key: string, acknowledged: Map<number, Pet>, label: string): Promise<void> {
  const listed = await listAllPets(server.base, key);
  const ids = listed.map((pet) => pet.id);
  expect(
    ids.every((id, i) => i === 0 || id > (ids[i - 1] as number)),
    `${label}: the listing is not strictly ascending by id (a pet twice, or out of order)`,
  ).toBe(true);
  const differing = listed.filter((pet) => !isDeepStrictEqual(acknowledged.get(pet.id), pet));
  expect(differing.map((pet) => ({ listed: pet, acknowledged: acknowledged.get(pet.id) })), `${label}: listed pets that were not acknowledged so`).toEqual([]);
  const listedIds = new Set(ids);
  const missing = [...acknowledged.keys()].filter((id) => !listedIds.has(id));
  expect(missing, `${label}: acknowledged pets not listed`).toEqual([]);
  expect(listed.length, `${label}: listed count`).toBe(acknowledged.size);
}

describe.skipIf(!postgresUrl).each(WAYS)(`scale-out: two instances on one PostgreSQL database, %s${postgresUrl ? '' : ' (skipped: DATABASE_URL is not set)'}`, (way, openStore) => {
  afterAll(killAll);

  it(`${CREATES} concurrent creates over two instances get distinct ids, list once via either, and key revocation reaches both within the bound`, async () => {
    if (!postgresUrl) return;
    const random = seededRandom('scale-out');
    const store = await openStore(postgresUrl, 'scaleout');
    const agents: Agent[] = [];
    /** The test's own handle on the shared database, for the key store (as `npm run keys` uses it). */
    let direct: DatabaseHandle | undefined;
    try {
      const env = { KEY_REFRESH_MS: String(KEY_REFRESH_MS) };
      // One after the other: the first start creates the bootstrap key; the second must find it.
      const a = await startServerProcess(store, env);
      const b = await startServerProcess(store, env);
      const key = a.bootstrapKey;
      expect(key, `the first start printed no bootstrap key:\n${a.proc.output()}`).toBeDefined();
      expect(b.bootstrapKey, 'the second instance created a key of its own: it did not see the first one').toBeUndefined();
      if (key === undefined) return;
      const instances = [a, b] as const;

      // ---- 1,000 creates, split at random between the instances.
      const acknowledged = new Map<number, Pet>();
      const createdBy = new Map<number, 0 | 1>();
      const perInstance = [0, 0];
      const unexpected: string[] = [];
      const reused: number[] = [];
      const targets = Array.from({ length: CREATES }, () => (random.next() < 0.5 ? 0 : 1));
      for (let i = 0; i < 2; i++) agents.push(new Agent({ keepAlive: true, maxSockets: IN_FLIGHT }));
      const startedAt = Date.now();
      await pooled(CREATES, IN_FLIGHT, async (i) => {
        const which = targets[i] as 0 | 1;
        const server = instances[which];
        const body = newPet(i);
        const response = await send(`${server.base}/pets`, { method: 'POST', key, body, agent: agents[which], timeoutMs: 30_000 });
        let pet: unknown;
        try {
          pet = JSON.parse(response.text);
        } catch {
          pet = undefined;
        }
        const location = response.headers.location;
        if (response.status !== 201 || !isPetAsSent(pet, body) || location !== `/v1/pets/${pet.id}`) {
          unexpected.push(`POST ${JSON.stringify(body)} to instance ${which === 0 ? 'A' : 'B'} → ${response.status} ${response.text.slice(0, 300)} (Location ${String(location)})`);
          return;
        }
        if (acknowledged.has(pet.id)) reused.push(pet.id);
        acknowledged.set(pet.id, pet);
        createdBy.set(pet.id, which);
        perInstance[which] = (perInstance[which] ?? 0) + 1;
      });
      const createMs = Date.now() - startedAt;
      expect(unexpected, 'creates not answered 201 with the pet that was sent').toEqual([]);
      expect(reused, 'ids handed out twice').toEqual([]);
      expect(acknowledged.size, 'distinct ids').toBe(CREATES);

      // ---- Paging through either instance: each pet once, ascending, as acknowledged.
      await checkListing(a, key, acknowledged, 'listing via instance A');
      await checkListing(b, key, acknowledged, 'listing via instance B');

      // A page link minted by A, followed on B: the same page B would have given.
      const firstA = await send(`${a.base}/pets?limit=100`, { key });
      const nextFromA = nextLink(typeof firstA.headers.link === 'string' ? firstA.headers.link : null);
      expect(nextFromA, `instance A's first page has no Link rel="next": ${String(firstA.headers.link)}`).toBeDefined();
      const secondViaB = await send(new URL(nextFromA as string, new URL(b.base).origin).toString(), { key });
      const secondViaA = await send(new URL(nextFromA as string, new URL(a.base).origin).toString(), { key });
      expect(secondViaB.status, secondViaB.text).toBe(200);
      expect(secondViaB.text, 'A\'s next-page link followed on B gives the page A gives').toBe(secondViaA.text);

      // Each pet read back through the instance that did not create it.
      const crossReads: string[] = [];
      const ids = [...acknowledged.keys()];
      await pooled(ids.length, IN_FLIGHT, async (i) => {
        const id = ids[i] as number;
        const other = instances[createdBy.get(id) === 0 ? 1 : 0];
        const response = await send(`${other.base}/pets/${id}`, { key, agent: agents[createdBy.get(id) === 0 ? 1 : 0] });
        if (response.status !== 200 || response.text !== JSON.stringify(acknowledged.get(id))) crossReads.push(`GET /pets/${id} via the other instance → ${response.status} ${response.text.slice(0, 200)}`);
      });
      expect(crossReads, 'pets that did not read back unchanged through the other instance').toEqual([]);

      // ---- Keys: created in the shared database, valid on both; revoked, refused by both in time.
      direct = await openPostgres({ connection: store.env.DATABASE_URL as string, preparedStatements: store.env.DATABASE_PREPARED_STATEMENTS !== 'off' });
      const keys = createApiKeyStore(direct.db);
      const probe = await keys.create('scale-out probe');
      const createdAt = Date.now();
      const acceptedAfter = await Promise.all(instances.map((s) => msUntilStatus(s.base, probe.key, 200, createdAt, KEY_BOUND_MS)));
      expect(acceptedAfter.every((ms) => ms !== undefined), `a new key was not accepted by both instances within ${KEY_BOUND_MS} ms: ${JSON.stringify(acceptedAfter)}`).toBe(true);

      expect(await keys.revoke(probe.info.id)).toBe(true);
      // The revoke has committed: from here on, a reload on either instance no longer has the key.
      const revokedAt = Date.now();
      const refusedAfter = await Promise.all(instances.map((s) => msUntilStatus(s.base, probe.key, 401, revokedAt, KEY_BOUND_MS + 5_000)));
      expect(refusedAfter.every((ms) => ms !== undefined), `a revoked key was still accepted ${KEY_BOUND_MS + 5_000} ms later: ${JSON.stringify(refusedAfter)}`).toBe(true);
      for (const [i, ms] of refusedAfter.entries()) {
        expect(ms, `revocation reached instance ${i === 0 ? 'A' : 'B'} after ${ms} ms, beyond the bound of ${KEY_BOUND_MS} ms`).toBeLessThanOrEqual(KEY_BOUND_MS);
      }
      // Revoked stays revoked, and only that key is: the bootstrap key still works on both.
      for (const server of instances) {
        expect((await send(`${server.base}/pets?limit=1`, { key: probe.key })).status, 'the revoked key').toBe(401);
        expect((await send(`${server.base}/pets?limit=1`, { key })).status, 'the bootstrap key').toBe(200);
      }

      for (const server of instances) {
        const exit = await stopServer(server);
        expect(exit.code, `an instance did not exit 0 on SIGTERM:\n${server.proc.output().slice(-3000)}`).toBe(0);
      }

      const [toA, toB] = refusedAfter as [number, number];
      console.info(
        `[scale-out ${way}] ${CREATES} creates (${IN_FLIGHT} in flight) took ${createMs} ms; a new key was accepted after ${acceptedAfter.join(' / ')} ms (A / B); ` +
          `revocation refused after ${toA} / ${toB} ms (A / B), polled every ${KEY_POLL_MS} ms; bound ${KEY_BOUND_MS} ms = KEY_REFRESH_MS ${KEY_REFRESH_MS} + ${RELOAD_ALLOWANCE_MS} for one reload`,
      );
      console.info(
        `scale-out ${way}: ${CREATES} creates over 2 instances (${perInstance[0]} + ${perInstance[1]}), ${acknowledged.size} distinct ids, each listed once via both; ` +
          `revocation reached the other instance in ${Math.max(toA, toB)} ms (bound ${KEY_BOUND_MS} ms)`,
      );
    } finally {
      for (const agent of agents) agent.destroy();
      await killAll();
      await direct?.close();
      await store.dispose();
    }
  });

  it(`${KEYED_CREATES} creates, each sent with one Idempotency-Key to both instances at once, are stored once and replay the same id on both`, async () => {
    if (!postgresUrl) return;
    const store = await openStore(postgresUrl, 'scaleout_once');
    const agents = [new Agent({ keepAlive: true, maxSockets: KEYED_IN_FLIGHT }), new Agent({ keepAlive: true, maxSockets: KEYED_IN_FLIGHT })];
    try {
      const a = await startServerProcess(store);
      const b = await startServerProcess(store);
      const key = a.bootstrapKey;
      expect(key, `the first start printed no bootstrap key:\n${a.proc.output()}`).toBeDefined();
      if (key === undefined) return;
      const instances = [a, b] as const;
      const bodies = Array.from({ length: KEYED_CREATES }, (_, i) => ({ ...newPet(i), name: `scale-out once #${i}` }));
      const keyOf = (i: number) => `scale-out-once-${i}`;

      // Both instances get each key at the same moment; a 409 moves to the other instance.
      const answers: KeyedAnswer[][] = [];
      const problems: string[] = [];
      await pooled(KEYED_CREATES, KEYED_IN_FLIGHT, async (i) => {
        const body = bodies[i] as NewPet;
        try {
          answers[i] = await Promise.all([createOnce(instances, 0, key, body, keyOf(i), agents), createOnce(instances, 1, key, body, keyOf(i), agents)]);
        } catch (error) {
          problems.push(String(error));
        }
      });
      expect(problems, 'keyed creates not answered 201 with the pet that was sent').toEqual([]);
      const disagreeing = answers.filter((pair) => new Set(pair.map((answer) => answer.pet.id)).size !== 1);
      expect(disagreeing.map((pair) => pair.map((x) => `${x.path}: ${x.pet.id}`).join(' / ')), 'keys whose two answers carry different ids').toEqual([]);
      const notOneFirst = answers.filter((pair) => pair.filter((answer) => !answer.replayed).length !== 1);
      expect(notOneFirst.map((pair) => pair.map((x) => `${x.path}: ${x.pet.id}${x.replayed ? ' (replayed)' : ''}`).join(' / ')), 'keys without exactly one first create').toEqual([]);
      const inUse = answers.flat().reduce((n, answer) => n + answer.path.length - 1, 0);
      const crossed = answers.flat().filter((answer) => answer.path.length > 1).length;

      // Asked again, both instances replay the id every key got.
      const replayProblems: string[] = [];
      await pooled(KEYED_CREATES, KEYED_IN_FLIGHT, async (i) => {
        const id = answers[i]?.[0]?.pet.id;
        for (const [which, server] of instances.entries()) {
          const response = await send(`${server.base}/pets`, { method: 'POST', key, body: bodies[i], agent: agents[which], headers: { 'Idempotency-Key': keyOf(i) } });
          const pet = JSON.parse(response.text) as { id?: unknown };
          if (response.status !== 201 || response.headers['idempotent-replayed'] !== 'true' || pet.id !== id) {
            replayProblems.push(`key ${keyOf(i)} on ${which === 0 ? 'A' : 'B'}: ${response.status} ${String(response.headers['idempotent-replayed'])} ${response.text.slice(0, 200)} (expected id ${String(id)})`);
          }
        }
      });
      expect(replayProblems, 'replays that were not the id the key got').toEqual([]);

      // Each intended pet exactly once in the shared store, whichever instance lists it.
      const listed = await listAllPets(b.base, key);
      const copies = new Map<string, number>();
      for (const pet of listed) copies.set(pet.name, (copies.get(pet.name) ?? 0) + 1);
      const lost = bodies.filter((body) => !copies.has(body.name)).length;
      const duplicated = [...copies.values()].reduce((n, c) => n + c - 1, 0);
      const stored = bodies.filter((body) => copies.has(body.name)).length;
      expect({ stored, duplicated, lost, listed: listed.length }).toEqual({ stored: KEYED_CREATES, duplicated: 0, lost: 0, listed: KEYED_CREATES });

      for (const server of instances) {
        const exit = await stopServer(server);
        expect(exit.code, `an instance did not exit 0 on SIGTERM:\n${server.proc.output().slice(-3000)}`).toBe(0);
      }
      const firstOnA = answers.filter((pair) => pair.some((x) => !x.replayed && x.path.endsWith('A'))).length;
      console.info(
        `exactly-once creates (two instances, postgres ${way}): intended ${KEYED_CREATES}, stored ${stored}, duplicated ${duplicated}, lost ${lost}; ` +
          `each key sent to A and B at once: first creates ${firstOnA} on A + ${KEYED_CREATES - firstOnA} on B, ${inUse} 409s (${crossed} answers came after moving to the other instance), ` +
          `every other answer a replay of the same id; then all ${KEYED_CREATES} keys replayed the same id on both instances`,
      );
    } finally {
      for (const agent of agents) agent.destroy();
      await killAll();
      await store.dispose();
    }
  });
});
