/**
 * Crash durability: the production server runs as a child process under concurrent creates and
 * is killed with SIGKILL at a random moment. After a restart on the same store, every pet whose
 * 201 reached a client is there, unchanged; nothing is there that no client sent; no id is ever
 * handed out twice, and pets created after the restart get ids above every id that existed.
 * The store accumulates over the rounds, so each restart re-checks every earlier round too.
 *
 * Exactly once: every create carries its own Idempotency-Key, and after each restart the clients
 * retry, with the same key and body, every create that got no answer, until it is answered. A
 * create that had committed before the kill must come back as the replay of its pet; one that
 * had not is created then. At the end every pet the clients meant to add is stored exactly once:
 * 0 lost, 0 duplicated.
 *
 * SQLite always; PostgreSQL when DATABASE_URL is set (a database created for the run, dropped
 * after). ROBUST_SEED=<seed> repeats a run's kill moments.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { Agent } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewPet, Pet, PetStatus } from '../../client/index.js';
import { isPet, isPetAsSent, listAllPets, notAsSent, send, TransportError, type HttpResponse } from './support/http.js';
import { seededRandom } from './support/random.js';
import { pgbouncerMissing } from '../../scripts/lib/pgbouncer.js';
import { killAll, killServer, pgbouncerStore, postgresStore, sqliteStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';

const ROUNDS = 5;
/** Concurrent clients, each posting pets one after another on a keep-alive connection. */
const CLIENTS = 24;
/** The kill lands this long after the load starts (uniformly at random, inclusive). */
const KILL_WINDOW_MS = [300, 1500] as const;
/** Bounds on each client's loop, should the kill never come. */
const MAX_REQUESTS_PER_CLIENT = 5_000;
const LOAD_DEADLINE_MS = 20_000;
/** Pets created one at a time after each restart, to check that ids keep rising. */
const PROBES_PER_ROUND = 3;
/** Bounds on retrying one unanswered create after a restart (409s wait their Retry-After). */
const MAX_RETRIES = 30;

const postgresUrl = process.env.DATABASE_URL || undefined;
if (!postgresUrl) console.warn('[crash] DATABASE_URL is not set: the PostgreSQL crash rounds are skipped (SQLite still runs).');
const poolerMissing = postgresUrl ? pgbouncerMissing() : 'DATABASE_URL is not set';
if (postgresUrl && poolerMissing !== undefined) console.warn(`[crash] the rounds through PgBouncer are skipped: ${poolerMissing}.`);

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

/** The body a client sends: deterministic per (round, client, sequence), names unique in the run. */
function newPet(round: number, client: number, seq: number): NewPet {
  const pet: NewPet = { name: `crash r${round} c${client} #${seq}`, categoryId: 1 + ((client * 7 + seq * 13 + round) % 50) };
  // Every fifth leaves status out: the stored default must come back as 'available'.
  if (seq % 5 !== 4) pet.status = STATUSES[(client + seq + round) % 3] as PetStatus;
  return pet;
}

/** A create as a client means it: the body and the Idempotency-Key it sends on every try. */
interface Intent {
  body: NewPet;
  key: string;
}

/** The key of a create: unique in the run, like its name. */
function keyOf(body: NewPet): string {
  return `crash:${body.name.replace(/[^\x21-\x7E]/g, '_')}`;
}

interface LoadResult {
  acknowledged: Pet[];
  /** Creates sent but never answered (the kill cut them off): retried after the restart. */
  unanswered: Intent[];
  /** Non-201 answers, or a 201 whose body is not the pet that was sent: none may happen. */
  unexpected: string[];
  /** How each client's loop ended when the server died (error codes, counted). */
  cutBy: Record<string, number>;
}

/** CLIENTS loops posting pets until the server stops answering (bounded in count and time). */
async function runLoad(server: ServerProcess, key: string, round: number, sent: Map<string, NewPet>): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const result: LoadResult = { acknowledged: [], unanswered: [], unexpected: [], cutBy: {} };
  const deadline = Date.now() + LOAD_DEADLINE_MS;
  try {
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let seq = 0; seq < MAX_REQUESTS_PER_CLIENT && Date.now() < deadline; seq++) {
          const body = newPet(round, client, seq);
          sent.set(body.name, body);
          let response;
          try {
            response = await send(`${server.base}/pets`, { method: 'POST', key, body, agent, timeoutMs: 10_000, headers: { 'Idempotency-Key': keyOf(body) } });
          } catch (error) {
            // The server is gone (or going): this client is done until the restart, when it retries this create.
            const code = error instanceof TransportError ? error.code : String(error);
            result.cutBy[code] = (result.cutBy[code] ?? 0) + 1;
            result.unanswered.push({ body, key: keyOf(body) });
            return;
          }
          let pet: unknown;
          try {
            pet = JSON.parse(response.text);
          } catch {
            pet = undefined;
          }
          if (response.status === 201 && isPetAsSent(pet, body)) {
            result.acknowledged.push(pet);
          } else {
            result.unexpected.push(`POST ${JSON.stringify(body)} → ${response.status} ${response.text.slice(0, 300)}`);
          }
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return result;
}

interface RetryResult {
  /** Answered 201 with `Idempotent-Replayed: true`: committed before the kill, its 201 lost. */
  replayed: Pet[];
  /** Answered 201 as a first create: the kill came before it committed. */
  created: Pet[];
  /** Anything but a 201 with the pet that was sent, or no answer within MAX_RETRIES. */
  unexpected: string[];
  /** 409s met on the way (the key still held, say by a dead instance's open transaction). */
  inUse: number;
}

/** Sends each unanswered create again, same key and body, until it is answered 201. */
async function retryUnanswered(server: ServerProcess, key: string, intents: readonly Intent[]): Promise<RetryResult> {
  const result: RetryResult = { replayed: [], created: [], unexpected: [], inUse: 0 };
  await Promise.all(
    intents.map(async ({ body, key: idempotencyKey }) => {
      let last = 'never answered';
      for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
        let response: HttpResponse;
        try {
          response = await send(`${server.base}/pets`, { method: 'POST', key, body, timeoutMs: 10_000, headers: { 'Idempotency-Key': idempotencyKey } });
        } catch (error) {
          last = error instanceof TransportError ? error.code : String(error);
          await sleep(200);
          continue;
        }
        if (response.status === 409) {
          result.inUse++;
          await sleep(1_000 * Number(response.headers['retry-after'] ?? 1));
          continue;
        }
        let pet: unknown;
        try {
          pet = JSON.parse(response.text);
        } catch {
          pet = undefined;
        }
        if (response.status !== 201 || !isPetAsSent(pet, body)) {
          result.unexpected.push(`retry of POST ${JSON.stringify(body)} → ${response.status} ${response.text.slice(0, 300)}`);
          return;
        }
        (response.headers['idempotent-replayed'] === 'true' ? result.replayed : result.created).push(pet);
        return;
      }
      result.unexpected.push(`retry of POST ${JSON.stringify(body)}: no 201 after ${MAX_RETRIES} tries (last: ${last})`);
    }),
  );
  return result;
}

/** Per intended create (every name sent), how often the store holds it: the exactly-once figures. */
function exactlyOnce(stored: readonly Pet[], sent: ReadonlyMap<string, NewPet>): { intended: number; stored: number; duplicated: number; lost: number } {
  const copies = new Map<string, number>();
  for (const pet of stored) copies.set(pet.name, (copies.get(pet.name) ?? 0) + 1);
  let storedOnce = 0;
  let duplicated = 0;
  let lost = 0;
  for (const name of sent.keys()) {
    const n = copies.get(name) ?? 0;
    if (n === 0) lost++;
    else storedOnce++;
    if (n > 1) duplicated += n - 1;
  }
  return { intended: sent.size, stored: storedOnce, duplicated, lost };
}

interface RoundFigures {
  killAfterMs: number;
  acknowledged: number;
  /** Unanswered at the kill, answered after the restart by a replay (had committed) or a first create (had not). */
  replayed: number;
  createdOnRetry: number;
}

async function crashRounds(store: Store, label: string): Promise<void> {
  const random = seededRandom(label);
  /** Every pet a client saw acknowledged, by id, as the 201 body said. */
  const acknowledged = new Map<number, Pet>();
  /** Everything any client ever sent, by its unique name. */
  const sent = new Map<string, NewPet>();
  const figures: RoundFigures[] = [];
  let verifiedTotal = 0;
  let server = await startServerProcess(store);
  const key = server.bootstrapKey;
  expect(key, `the first start printed no bootstrap key:\n${server.proc.output()}`).toBeDefined();
  if (key === undefined) return;

  for (let round = 1; round <= ROUNDS; round++) {
    const killAfterMs = random.int(KILL_WINDOW_MS[0], KILL_WINDOW_MS[1]);
    const load = runLoad(server, key, round, sent);
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    const exit = await killServer(server);
    expect(exit.signal, `round ${round}: the server was not killed by SIGKILL (it exited on its own?)\n${server.proc.output()}`).toBe('SIGKILL');
    const result = await load;

    expect(result.unexpected, `round ${round}: answers other than a 201 with the sent pet, before the kill`).toEqual([]);
    expect(result.acknowledged.length, `round ${round}: no create was acknowledged before the kill, so the round proves nothing`).toBeGreaterThan(0);
    const reused = result.acknowledged.filter((pet) => acknowledged.has(pet.id));
    expect(reused, `round ${round}: ids acknowledged twice`).toEqual([]);
    for (const pet of result.acknowledged) acknowledged.set(pet.id, pet);
    const highestBeforeCrash = Math.max(...acknowledged.keys());

    // Restart on the same store: the key and every acknowledged pet must still be there.
    server = await startServerProcess(store);
    expect(server.bootstrapKey, 'a restart created a new bootstrap key: the store lost its keys').toBeUndefined();

    // The clients retry what got no answer: each is answered now, by its replay or as a first create.
    const retried = await retryUnanswered(server, key, result.unanswered);
    expect(retried.unexpected, `round ${round}: retries of unanswered creates not answered 201 with the pet that was sent`).toEqual([]);
    const retriedPets = [...retried.replayed, ...retried.created];
    expect(retriedPets.filter((pet) => acknowledged.has(pet.id)), `round ${round}: a retry answered with an id already acknowledged to another create`).toEqual([]);
    for (const pet of retriedPets) acknowledged.set(pet.id, pet);
    const listed = await listAllPets(server.base, key);

    const ids = listed.map((pet) => pet.id);
    expect(
      ids.every((id, i) => i === 0 || id > (ids[i - 1] as number)),
      `round ${round}: the listing is not strictly increasing by id (an id twice, or paging broken)`,
    ).toBe(true);
    const byId = new Map(listed.map((pet) => [pet.id, pet]));
    const lost = [...acknowledged.values()].filter((pet) => !byId.has(pet.id));
    expect(lost, `round ${round}: acknowledged pets missing after the restart`).toEqual([]);
    const altered = [...acknowledged.values()].filter((pet) => byId.has(pet.id) && !isDeepStrictEqual(byId.get(pet.id), pet));
    expect(altered.map((pet) => ({ acknowledged: pet, stored: byId.get(pet.id) })), `round ${round}: acknowledged pets changed`).toEqual([]);
    // Nothing in the store that no client sent, nothing stored twice, nothing stored differently.
    const phantom = notAsSent(listed, sent);
    expect(phantom, `round ${round}: stored pets that no client sent, stored twice, or stored differently`).toEqual([]);
    verifiedTotal += acknowledged.size;
    const verifiedNow = acknowledged.size;
    // Every create has been answered now, so the store holds exactly the acknowledged pets.
    expect(listed.length, `round ${round}: pets stored that no answer acknowledged (a create stored twice?)`).toBe(verifiedNow);

    // Ids keep rising across the crash: above every id acknowledged or stored before it.
    const highestBeforeProbes = Math.max(highestBeforeCrash, ...ids);
    let highest = highestBeforeProbes;
    const probeIds: number[] = [];
    for (let i = 0; i < PROBES_PER_ROUND; i++) {
      const body: NewPet = { name: `crash probe r${round} #${i}`, categoryId: 1 + i, status: 'pending' };
      sent.set(body.name, body);
      const response = await send(`${server.base}/pets`, { method: 'POST', key, body, headers: { 'Idempotency-Key': keyOf(body) } });
      expect(response.status, response.text).toBe(201);
      const pet = JSON.parse(response.text) as unknown;
      expect(isPetAsSent(pet, body), response.text).toBe(true);
      if (!isPet(pet)) return;
      expect(pet.id, `round ${round}: a pet created after the restart got id ${pet.id}, not above ${highest}`).toBeGreaterThan(highest);
      expect(acknowledged.has(pet.id)).toBe(false);
      acknowledged.set(pet.id, pet);
      probeIds.push(pet.id);
      highest = pet.id;
    }

    figures.push({ killAfterMs, acknowledged: result.acknowledged.length, replayed: retried.replayed.length, createdOnRetry: retried.created.length });
    console.info(
      `[${label}] round ${round}: SIGKILL ${killAfterMs} ms into the load; ${result.acknowledged.length} creates acknowledged, ` +
        `${result.unanswered.length} unanswered; clients cut off by ${JSON.stringify(result.cutBy)}; after the restart their retries got ` +
        `${retried.replayed.length} replays (committed before the kill, 201 lost) and ${retried.created.length} first creates (not committed), ${retried.inUse} 409s on the way; ` +
        `all ${verifiedNow} acknowledged pets (all rounds) present once and unchanged; new ids ${probeIds.join(', ')} > ${highestBeforeProbes}`,
    );
  }

  // A last clean stop and start: the last round's probes, and everything before, once more.
  const exit = await stopServer(server);
  expect(exit.code, `the last server did not exit 0 on SIGTERM:\n${server.proc.output()}`).toBe(0);
  server = await startServerProcess(store);
  const finalListing = await listAllPets(server.base, key);
  const final = new Map(finalListing.map((pet) => [pet.id, pet]));
  const missing = [...acknowledged.values()].filter((pet) => !isDeepStrictEqual(final.get(pet.id), pet));
  expect(missing, 'acknowledged pets missing or changed after the final restart').toEqual([]);
  expect(final.size, 'pets appeared or vanished between the last two starts').toBe(acknowledged.size);
  verifiedTotal += acknowledged.size;
  const once = exactlyOnce(finalListing, sent);
  const lastExit = await stopServer(server);
  expect(lastExit.code).toBe(0);
  const replayed = figures.reduce((n, f) => n + f.replayed, 0);
  const createdOnRetry = figures.reduce((n, f) => n + f.createdOnRetry, 0);
  console.info(
    `[${label}] SUMMARY ${store.kind}: ${ROUNDS} rounds of SIGKILL under ${CLIENTS} concurrent clients (at ${figures.map((f) => f.killAfterMs).join(', ')} ms into the load); ` +
      `${figures.reduce((n, f) => n + f.acknowledged, 0)} acknowledged creates under load + ${replayed + createdOnRetry} unanswered ones retried after a restart ` +
      `(${replayed} replayed: committed before the kill; ${createdOnRetry} created on the retry) + ${ROUNDS * PROBES_PER_ROUND} probes = ${acknowledged.size} distinct pets; ` +
      `all ${acknowledged.size} verified present and unchanged after the final restart (${verifiedTotal} acknowledged-pet checks over ${ROUNDS + 1} restarts); ` +
      `lost: 0, altered: 0, phantom or duplicated: 0, ids reused: 0.`,
  );
  console.info(`exactly-once creates (${store.kind}): intended ${once.intended}, stored ${once.stored}, duplicated ${once.duplicated}, lost ${once.lost}`);
  expect(once.duplicated, 'intended creates stored more than once').toBe(0);
  expect(once.lost, 'intended creates never stored').toBe(0);
  expect(once.stored).toBe(once.intended);
}

describe('crash durability: SIGKILL under concurrent creates, then restart on the same store', () => {
  afterAll(killAll);

  it(`sqlite: ${ROUNDS} random SIGKILLs under ${CLIENTS} concurrent clients lose no acknowledged pet and reuse no id`, async () => {
    const store = sqliteStore('crash');
    try {
      await crashRounds(store, 'crash sqlite');
    } finally {
      await killAll();
      await store.dispose();
    }
  });

  it.skipIf(!postgresUrl)(
    `postgres: ${ROUNDS} random SIGKILLs under ${CLIENTS} concurrent clients lose no acknowledged pet and reuse no id${postgresUrl ? '' : ' (skipped: DATABASE_URL is not set)'}`,
    async () => {
      if (!postgresUrl) return;
      const store = await postgresStore(postgresUrl, 'crash');
      try {
        await crashRounds(store, 'crash postgres');
      } finally {
        await killAll();
        await store.dispose();
      }
    },
  );

  it.skipIf(poolerMissing !== undefined)(
    `postgres through PgBouncer (transaction mode): ${ROUNDS} random SIGKILLs under ${CLIENTS} concurrent clients lose no acknowledged pet and reuse no id${poolerMissing === undefined ? '' : ` (skipped: ${poolerMissing})`}`,
    async () => {
      if (!postgresUrl) return;
      // The pooler outlives every killed server, as it does in production: whatever a killed
      // server left on its server connections (an open transaction, a statement) meets the next start.
      const store = await pgbouncerStore(postgresUrl, 'crash');
      try {
        await crashRounds(store, 'crash postgres through PgBouncer');
      } finally {
        await killAll();
        await store.dispose();
      }
    },
  );
});
