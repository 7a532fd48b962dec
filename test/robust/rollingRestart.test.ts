/**
 * Deploys that drop nothing (issue 33): the drain before a stop (src/transport/drain.ts) proved with a
 * real balancer and real load, against the bundle `npm start` runs.
 *
 * Behind HAProxy: Debian's HAProxy in front of two instances on one PostgreSQL database, checking
 * GET /readyz every second (fall 2, rise 2), `retries 3`, `option redispatch`, connections to the
 * instances kept alive and reused (test/robust/support/haproxy.ts). CLIENTS clients through it,
 * each over undici's keep-alive pool, list, read pets already created, and create with an
 * Idempotency-Key (a create that fails is retried with the same key and body). Meanwhile each
 * instance in turn is restarted RESTART_ROUNDS times: SIGTERM, its exit, a new start on the same
 * port, HAProxy seeing it up again before the next. Asserted: not one request failed, every create
 * is stored exactly once (the keys sent against the pets stored), every exit status is 0, and
 * every instance drained (HAProxy probes it, so each stop must drain).
 *
 * One instance, no balancer: CLIENTS clients straight at one instance, a prober asking /readyz
 * every second as a balancer would, SIGTERM under load. Every answer is whole and correct; the
 * server kept serving through the drain, each answer then with `Connection: close`, and /readyz
 * said 503 with an Error; once the listener closed, requests are refused. A request that got
 * neither an answer nor a refusal must be one the server never read: its connection reached the
 * kernel's queue as the listener closed (the kernel resets those, so the client sees a reset, not a
 * refusal). Proof that it was not read: no line of the server's request log has its X-Request-Id,
 * no such create is stored, and the server logged no forced close.
 *
 * Skipped, saying so, without `haproxy` on PATH or DATABASE_URL (the first case only).
 */
import { isDeepStrictEqual } from 'node:util';
import { Agent, request, type Dispatcher } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewPet, Pet, PetStatus } from '../../client/index.js';
import type { Exit } from '../../scripts/lib/processes.js';
import { freePort } from '../../scripts/lib/processes.js';
import { startHaproxy, haproxyVersion, type Haproxy, type HealthCheck } from './support/haproxy.js';
import { isPet, isPetAsSent, listAllPets } from './support/http.js';
import { seededRandom, type Random } from './support/random.js';
import { exitWithin, killAll, postgresStore, sqliteStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';

const CLIENTS = 16;
const CHECK: HealthCheck = { intervalMs: 1_000, fall: 2, rise: 2 };
const RESTART_ROUNDS = 2;
/** Load before the first SIGTERM and after the last restart. */
const WARMUP_MS = 2_000;
/** Pets made before the load, so reads have something to read. */
const SEED_PETS = 20;
/** Bounds on waiting (never asserted as speed): an exit, a state HAProxy reaches, one request. */
const EXIT_BOUND_MS = 30_000;
const STATE_BOUND_MS = 30_000;
const REQUEST_BOUND_MS = 30_000;
const MAX_CREATE_TRIES = 50;

const version = haproxyVersion();
const postgresUrl = process.env.DATABASE_URL || undefined;
const skipBalancer = version === undefined ? '`haproxy` is not installed (apt-get install haproxy; .ci/run installs it)' : postgresUrl === undefined ? 'DATABASE_URL is not set' : undefined;
if (skipBalancer) console.warn(`[rolling restart] ${skipBalancer}: the rolling restart behind HAProxy is skipped (the one-instance drain still runs).`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const STATUSES: readonly (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined];

interface Reply {
  status: number;
  connection: string | undefined;
  location: string | undefined;
  replayed: boolean;
  text: string;
}

/** A transport failure: the socket error's code (undici's, or the system's: ECONNREFUSED). */
class Failed extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** One request through `dispatcher`, resolved once the whole body is in. */
async function call(dispatcher: Dispatcher, url: string, apiKey: string, init: { method?: 'GET' | 'POST'; body?: NewPet; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, ...init.headers };
  const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await request(url, { method: init.method ?? 'GET', headers, body: payload, dispatcher, headersTimeout: REQUEST_BOUND_MS, bodyTimeout: REQUEST_BOUND_MS });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      connection: header(response.headers.connection),
      location: header(response.headers.location),
      replayed: header(response.headers['idempotent-replayed']) === 'true',
      text,
    };
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    throw new Failed(typeof code === 'string' ? code : 'UNKNOWN', typeof message === 'string' ? message : String(error));
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What the clients share: the pets acknowledged (for reads) and every create's key and body. */
class Ledger {
  /** Idempotency-Key → the body sent with it; the pet's name is the key, so stored pets map back. */
  readonly intended = new Map<string, NewPet>();
  readonly acknowledged = new Map<string, Pet>();
  readonly readable: Pet[] = [];

  newCreate(key: string, random: Random): NewPet {
    const body: NewPet = { name: key, categoryId: random.int(1, 60) };
    const status = STATUSES[random.int(0, STATUSES.length - 1)];
    if (status !== undefined) body.status = status;
    this.intended.set(key, body);
    return body;
  }

  acknowledge(key: string, pet: Pet): void {
    if (!this.acknowledged.has(key)) this.readable.push(pet);
    this.acknowledged.set(key, pet);
  }
}

/** Why an answer is not the one its operation must get, or undefined when it is. */
function wrongAnswer(op: 'list' | 'get' | 'create', reply: Reply, expected?: Pet | NewPet): string | undefined {
  const body = parse(reply.text);
  const ok =
    op === 'list'
      ? reply.status === 200 && Array.isArray(body) && body.every(isPet)
      : op === 'get'
        ? reply.status === 200 && isDeepStrictEqual(body, expected)
        : reply.status === 201 && expected !== undefined && isPetAsSent(body, expected as NewPet) && reply.location === `/v1/pets/${(body as Pet).id}`;
  return ok ? undefined : `${reply.status} ${reply.text.slice(0, 200)}`;
}

/** The stored pets against the keys sent: each once, as sent; nothing else. */
function tally(ledger: Ledger, stored: readonly Pet[]): { stored: number; lost: string[]; duplicated: string[]; strangers: string[]; changed: string[] } {
  const byName = new Map<string, Pet[]>();
  for (const pet of stored) byName.set(pet.name, [...(byName.get(pet.name) ?? []), pet]);
  const lost: string[] = [];
  const duplicated: string[] = [];
  const changed: string[] = [];
  for (const [key, body] of ledger.intended) {
    const pets = byName.get(key) ?? [];
    if (pets.length === 0) lost.push(key);
    if (pets.length > 1) duplicated.push(`${key}: ids ${pets.map((pet) => pet.id).join(', ')}`);
    const [pet] = pets;
    const acknowledged = ledger.acknowledged.get(key);
    if (pet !== undefined && (!isPetAsSent(pet, body) || (acknowledged !== undefined && !isDeepStrictEqual(acknowledged, pet)))) changed.push(`${key}: stored ${JSON.stringify(pet)}`);
  }
  const strangers = stored.filter((pet) => !ledger.intended.has(pet.name)).map((pet) => JSON.stringify(pet));
  return { stored: stored.length, lost, duplicated, strangers, changed };
}

interface Instance {
  name: string;
  port: number;
  server: ServerProcess;
}

interface Restart {
  name: string;
  round: number;
  exit: Exit | undefined;
  drained: boolean;
  /** From the SIGTERM, in ms. */
  down: number | undefined;
  exited: number;
  listening: number;
  up: number;
}

/** HAProxy's view of each instance, polled every 100 ms: the latest states and when each changed. */
class StateWatch {
  latest = new Map<string, string>();
  readonly changes: { name: string; state: string; at: number }[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly haproxy: Haproxy) {
    this.loop = (async () => {
      while (this.running) {
        const states = await haproxy.states().catch(() => undefined);
        if (states !== undefined) {
          const at = Date.now();
          for (const [name, state] of states) if (this.latest.get(name) !== state) this.changes.push({ name, state, at });
          this.latest = states;
        }
        await sleep(100);
      }
    })();
  }

  async until(name: string, wanted: (state: string) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + STATE_BOUND_MS;
    while (!wanted(this.latest.get(name) ?? '')) {
      if (Date.now() > deadline) throw new Error(`HAProxy did not see ${name} ${what} within ${STATE_BOUND_MS} ms (state: ${this.latest.get(name) ?? 'none'})\n${this.haproxy.proc.output().slice(-2000)}`);
      await sleep(50);
    }
  }

  firstSince(name: string, since: number, wanted: (state: string) => boolean): number | undefined {
    return this.changes.find((change) => change.name === name && change.at >= since && wanted(change.state))?.at;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

const isUp = (state: string) => state === 'UP';
const isDown = (state: string) => state.startsWith('DOWN');
const drainedIn = (output: string) => output.includes('"msg":"draining');

describe('the drain before a stop, under load', () => {
  afterAll(killAll);

  it.skipIf(skipBalancer !== undefined)(
    `behind HAProxy: ${CLIENTS} clients while each of two instances restarts ${RESTART_ROUNDS} times: 0 failed requests, every create stored once, every exit 0${skipBalancer ? ` (skipped: ${skipBalancer})` : ''}`,
    async () => {
      if (postgresUrl === undefined) return;
      const random = seededRandom('rolling restart');
      const store: Store = await postgresStore(postgresUrl, 'rolling');
      const agent = new Agent({ connections: CLIENTS });
      let haproxy: Haproxy | undefined;
      let watch: StateWatch | undefined;
      let stopLoad = false;
      try {
        const env = (port: number) => ({ PORT: String(port), LOG_LEVEL: 'info' });
        const instances: Instance[] = [];
        // One after the other: the first start creates the key; the second finds it.
        for (const name of ['a', 'b']) {
          const port = await freePort();
          instances.push({ name, port, server: await startServerProcess(store, env(port)) });
        }
        const apiKey = instances[0]?.server.bootstrapKey;
        expect(apiKey, 'the first start printed a key').toBeDefined();
        if (apiKey === undefined) return;
        haproxy = await startHaproxy(
          instances.map(({ name, port }) => ({ name, port })),
          CHECK,
        );
        const front = haproxy;
        watch = new StateWatch(front);
        for (const { name } of instances) await watch.until(name, isUp, 'up');

        const ledger = new Ledger();
        const base = `${front.origin}/v1`;
        for (let i = 0; i < SEED_PETS; i++) {
          const key = `rolling-seed-${i}`;
          const body = ledger.newCreate(key, random);
          const reply = await call(agent, `${base}/pets`, apiKey, { method: 'POST', body, headers: { 'idempotency-key': key } });
          expect(wrongAnswer('create', reply, body), `seed create ${key}`).toBeUndefined();
          ledger.acknowledge(key, JSON.parse(reply.text) as Pet);
        }

        // ---- The load: every attempt counted; a failed one is recorded and, for a create, retried.
        const counts = { list: 0, get: 0, create: 0, retried: 0, conflicts: 0 };
        const failures: string[] = [];
        const began = Date.now();
        const at = () => seconds(Date.now() - began);
        const client = async (c: number) => {
          for (let n = 0; !stopLoad; n++) {
            const roll = random.next();
            if (roll < 0.2) {
              const key = `rolling-${c}-${n}`;
              const body = ledger.newCreate(key, random);
              for (let attempt = 1; ; attempt++) {
                counts.create++;
                if (attempt > 1) counts.retried++;
                try {
                  const reply = await call(agent, `${base}/pets`, apiKey, { method: 'POST', body, headers: { 'idempotency-key': key } });
                  if (reply.status === 409) {
                    // The same key still being created by an earlier attempt: wait as told, then ask again.
                    counts.conflicts++;
                    await sleep(1_000);
                    continue;
                  }
                  const wrong = wrongAnswer('create', reply, body);
                  if (wrong === undefined) {
                    ledger.acknowledge(key, JSON.parse(reply.text) as Pet);
                    break;
                  }
                  failures.push(`${at()} create ${key}: ${wrong}`);
                } catch (error) {
                  failures.push(`${at()} create ${key}: ${error instanceof Failed ? error.code : ''} ${String(error)}`);
                }
                if (attempt >= MAX_CREATE_TRIES) break;
                await sleep(200);
              }
            } else if (roll < 0.5 && ledger.readable.length > 0) {
              const pet = ledger.readable[random.int(0, ledger.readable.length - 1)] as Pet;
              counts.get++;
              try {
                const wrong = wrongAnswer('get', await call(agent, `${base}/pets/${pet.id}`, apiKey), pet);
                if (wrong !== undefined) failures.push(`${at()} get ${pet.id}: ${wrong}`);
              } catch (error) {
                failures.push(`${at()} get ${pet.id}: ${error instanceof Failed ? error.code : ''} ${String(error)}`);
              }
            } else {
              counts.list++;
              const limit = random.pick([5, 20, 100]);
              try {
                const wrong = wrongAnswer('list', await call(agent, `${base}/pets?limit=${limit}`, apiKey));
                if (wrong !== undefined) failures.push(`${at()} list: ${wrong}`);
              } catch (error) {
                failures.push(`${at()} list: ${error instanceof Failed ? error.code : ''} ${String(error)}`);
              }
            }
          }
        };
        const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));

        // ---- The rolling restarts, one instance at a time, each back up before the next goes.
        await sleep(WARMUP_MS);
        const restarts: Restart[] = [];
        const exits: Exit[] = [];
        for (let round = 1; round <= RESTART_ROUNDS; round++) {
          for (const instance of instances) {
            for (const other of instances) await watch.until(other.name, isUp, 'up before the next restart');
            const sigtermAt = Date.now();
            instance.server.proc.child.kill('SIGTERM');
            const exit = await exitWithin(instance.server, EXIT_BOUND_MS);
            const exitedAt = Date.now();
            if (exit !== undefined) exits.push(exit);
            const drained = drainedIn(instance.server.proc.output());
            expect(exit, `${instance.name} did not exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${instance.server.proc.output().slice(-3000)}`).toBeDefined();
            instance.server = await startServerProcess(store, env(instance.port));
            const listeningAt = Date.now();
            await watch.until(instance.name, isUp, 'up after its restart');
            const upAt = Date.now();
            const downAt = watch.firstSince(instance.name, sigtermAt, isDown);
            restarts.push({ name: instance.name, round, exit, drained, down: downAt === undefined ? undefined : downAt - sigtermAt, exited: exitedAt - sigtermAt, listening: listeningAt - sigtermAt, up: upAt - sigtermAt });
          }
        }
        await sleep(WARMUP_MS);
        stopLoad = true;
        await load;
        const loadMs = Date.now() - began;

        // ---- What is stored, through the balancer, against the keys sent.
        const stored = await listAllPets(base, apiKey);
        const result = tally(ledger, stored);

        // ---- The last stop of each (HAProxy still probes, so each drains once more).
        const last = await Promise.all(instances.map(({ server }) => stopServer(server, EXIT_BOUND_MS)));
        exits.push(...last);
        const lastDrained = instances.map(({ server }) => drainedIn(server.proc.output()));

        const requests = counts.list + counts.get + counts.create;
        console.info(
          `[rolling restart] ${version}; 2 instances on ${store.label}; checks GET /readyz every ${CHECK.intervalMs} ms, fall ${CHECK.fall}, rise ${CHECK.rise}; retries 3, redispatch, http-reuse always\n` +
            `    ${CLIENTS} clients for ${seconds(loadMs)}: ${requests} requests (${counts.list} lists, ${counts.get} gets, ${counts.create} creates of which ${counts.retried} retries), ${failures.length} failed, ${counts.conflicts} 409s\n` +
            `    creates: intended ${ledger.intended.size}, stored ${result.stored}, lost ${result.lost.length}, duplicated ${result.duplicated.length}, other pets ${result.strangers.length}, changed ${result.changed.length}\n` +
            restarts
              .map(
                (r) =>
                  `    restart ${r.name}#${r.round}: SIGTERM → HAProxy saw it DOWN ${r.down === undefined ? 'never' : seconds(r.down)} → exit ${r.exit?.code ?? 'none'} at ${seconds(r.exited)}${r.drained ? ' (drained)' : ' (NO DRAIN)'} → listening again ${seconds(r.listening)} → UP in HAProxy ${seconds(r.up)}`,
              )
              .join('\n') +
            `\n    exit statuses: ${exits.map((exit) => (exit.signal ? exit.signal : String(exit.code))).join(', ')}` +
            (failures.length > 0 ? `\n    failures:\n      ${failures.slice(0, 30).join('\n      ')}` : ''),
        );

        expect(failures, 'requests that failed through the balancer during the rolling restarts').toEqual([]);
        expect(result.lost, 'creates stored no time').toEqual([]);
        expect(result.duplicated, 'creates stored more than once').toEqual([]);
        expect(result.strangers, 'stored pets no client sent').toEqual([]);
        expect(result.changed, 'stored pets that differ from what was sent or acknowledged').toEqual([]);
        expect(result.stored).toBe(ledger.intended.size);
        expect(exits.filter((exit) => exit.code !== 0 || exit.signal !== null), 'exits other than status 0').toEqual([]);
        expect(exits.length).toBe(instances.length * (RESTART_ROUNDS + 1));
        expect(restarts.filter((r) => !r.drained).map((r) => `${r.name}#${r.round}`), 'stops that did not drain, though HAProxy probed').toEqual([]);
        expect(lastDrained, 'the last stops drained too').toEqual(instances.map(() => true));
      } finally {
        stopLoad = true;
        await watch?.stop();
        await haproxy?.stop();
        await agent.close();
        await killAll();
        await store.dispose();
      }
    },
  );

  it(`one instance, no balancer: SIGTERM under load from ${CLIENTS} clients and a prober: /readyz 503 while every request is still served (Connection: close), then refused; every request it accepted is answered; exit 0`, async () => {
    const random = seededRandom('drain, one instance');
    const store = sqliteStore('drain');
    const agent = new Agent({ connections: CLIENTS });
    // A balancer's checks: a connection of their own.
    const probeAgent = new Agent({ connections: 1 });
    let stopped = false;
    try {
      const server = await startServerProcess(store, { LOG_LEVEL: 'info' });
      const apiKey = server.bootstrapKey;
      expect(apiKey, 'the first start printed a key').toBeDefined();
      if (apiKey === undefined) return;
      const ledger = new Ledger();
      for (let i = 0; i < SEED_PETS; i++) {
        const key = `drain-seed-${i}`;
        const body = ledger.newCreate(key, random);
        const reply = await call(agent, `${server.base}/pets`, apiKey, { method: 'POST', body, headers: { 'idempotency-key': key } });
        expect(wrongAnswer('create', reply, body), `seed create ${key}`).toBeUndefined();
        ledger.acknowledge(key, JSON.parse(reply.text) as Pet);
      }

      /** The moment the test saw the server's "draining" line: every request started after it was read by a draining server. */
      let drainSeen = false;
      let sigtermAt = 0;
      const probes: { afterDrain: boolean; status: number | string; code?: unknown; connection?: string | undefined }[] = [];
      const prober = (async () => {
        while (!stopped) {
          const afterDrain = drainSeen;
          try {
            const reply = await call(probeAgent, `${new URL(server.base).origin}/readyz`, apiKey);
            probes.push({ afterDrain, status: reply.status, code: (parse(reply.text) as { code?: unknown } | undefined)?.code, connection: reply.connection });
          } catch (error) {
            probes.push({ afterDrain, status: error instanceof Failed ? error.code : String(error) });
          }
          await sleep(CHECK.intervalMs);
        }
      })();

      type Kind = 'answered' | 'wrong' | 'refused' | 'no answer';
      const attempts: { op: 'list' | 'get' | 'create'; id: string; key?: string; afterDrain: boolean; at: number; kind: Kind; detail?: string; connection?: string | undefined }[] = [];
      const client = async (c: number) => {
        for (let n = 0; !stopped; n++) {
          const id = `drain-${c}-${n}`;
          const afterDrain = drainSeen;
          const roll = random.next();
          const op = roll < 0.2 ? 'create' : roll < 0.5 ? 'get' : 'list';
          const record = (kind: Kind, extra: { key?: string; detail?: string; connection?: string | undefined } = {}) => attempts.push({ op, id, afterDrain, at: Date.now(), kind, ...extra });
          const headers: Record<string, string> = { 'x-request-id': id };
          try {
            if (op === 'create') {
              const key = `drain-${c}-${n}`;
              const body = ledger.newCreate(key, random);
              const reply = await call(agent, `${server.base}/pets`, apiKey, { method: 'POST', body, headers: { ...headers, 'idempotency-key': key } });
              const wrong = wrongAnswer('create', reply, body);
              if (wrong === undefined) ledger.acknowledge(key, JSON.parse(reply.text) as Pet);
              record(wrong === undefined ? 'answered' : 'wrong', { key, detail: wrong, connection: reply.connection });
            } else if (op === 'get') {
              const pet = ledger.readable[random.int(0, ledger.readable.length - 1)] as Pet;
              const reply = await call(agent, `${server.base}/pets/${pet.id}`, apiKey, { headers });
              const wrong = wrongAnswer('get', reply, pet);
              record(wrong === undefined ? 'answered' : 'wrong', { detail: wrong, connection: reply.connection });
            } else {
              const reply = await call(agent, `${server.base}/pets?limit=${random.pick([5, 20, 100])}`, apiKey, { headers });
              const wrong = wrongAnswer('list', reply);
              record(wrong === undefined ? 'answered' : 'wrong', { detail: wrong, connection: reply.connection });
            }
          } catch (error) {
            const code = error instanceof Failed ? error.code : String(error);
            const key = op === 'create' ? id : undefined;
            // The listener is closed: every later request would be refused too.
            if (code === 'ECONNREFUSED') {
              record('refused', { key, detail: code });
              break;
            }
            record('no answer', { key, detail: `${code} ${String(error)}` });
          }
        }
      };
      const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));

      await sleep(WARMUP_MS);
      sigtermAt = Date.now();
      server.proc.child.kill('SIGTERM');
      for (let waited = 0; !drainedIn(server.proc.output()); waited += 10) {
        if (waited > EXIT_BOUND_MS || !server.proc.running()) break;
        await sleep(10);
      }
      drainSeen = drainedIn(server.proc.output());
      const drainSeenAt = Date.now();
      const exit = await exitWithin(server, EXIT_BOUND_MS);
      const exitedAt = Date.now();
      stopped = true;
      await Promise.all([load, prober]);

      // ---- What the server says it handled (its request log, by X-Request-Id) and what it stored.
      const logs = server.proc
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; reqId?: string; level?: number });
      const handled = new Set(logs.filter((line) => line.msg === 'request').map((line) => line.reqId));
      const again = await startServerProcess(store);
      const stored = await listAllPets(again.base, apiKey);
      const secondExit = await stopServer(again);
      const storedNames = new Set(stored.map((pet) => pet.name));

      const noAnswer = attempts.filter((a) => a.kind === 'no answer');
      const acceptedUnanswered = noAnswer.filter((a) => handled.has(a.id) || (a.key !== undefined && storedNames.has(a.key)));
      const firstRefusal = attempts.filter((a) => a.kind === 'refused').reduce((min, a) => Math.min(min, a.at), Number.POSITIVE_INFINITY);
      const duringDrain = attempts.filter((a) => a.afterDrain && a.kind === 'answered');
      const count = (kind: Kind) => attempts.filter((a) => a.kind === kind).length;
      const drainProbes = probes.filter((p) => p.afterDrain);
      const result = tally(ledger, stored);
      // A create that got no answer, or was refused, and is not stored, was never made: not part of what must be stored.
      for (const a of attempts) if (a.key !== undefined && a.kind !== 'answered' && !storedNames.has(a.key)) ledger.intended.delete(a.key);
      const kept = tally(ledger, stored);
      console.info(
        `[drain, one instance] ${CLIENTS} clients and a prober of /readyz every ${CHECK.intervalMs} ms; SIGTERM after ${seconds(WARMUP_MS)} of load\n` +
          `    ${attempts.length} requests: ${count('answered')} answered (${duringDrain.length} of them started once the server was draining), ${count('wrong')} wrong, ` +
          `${count('refused')} refused (listener closed), ${noAnswer.length} without an answer (${noAnswer.map((a) => a.detail?.split(' ')[0]).join(', ') || 'none'}; accepted by the server: ${acceptedUnanswered.length})\n` +
          `    SIGTERM → draining line seen ${seconds(drainSeenAt - sigtermAt)} → first refusal ${Number.isFinite(firstRefusal) ? seconds(firstRefusal - sigtermAt) : 'none'} → exit ${exit?.code ?? 'none'} at ${seconds(exitedAt - sigtermAt)}\n` +
          `    /readyz while draining: ${drainProbes.map((p) => `${p.status}${p.code ? ` ${String(p.code)}` : ''}`).join(', ') || 'not asked'}\n` +
          `    creates: ${result.stored} stored, ${kept.lost.length} acknowledged but lost, ${result.duplicated.length} duplicated, ${result.strangers.length} not sent, ${result.changed.length} changed`,
      );

      expect(exit, `no exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${server.proc.output().slice(-3000)}`).toBeDefined();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(secondExit.code).toBe(0);
      expect(drainSeen, 'the server drained (the prober asked /readyz)').toBe(true);
      expect(logs.filter((line) => (line.level ?? 0) >= 40), 'warnings or errors in the server log (a forced close would be one)').toEqual([]);
      expect(attempts.filter((a) => a.kind === 'wrong').map((a) => `${a.op} ${a.id}: ${a.detail}`), 'answers that are not what the operation must answer').toEqual([]);
      expect(acceptedUnanswered.map((a) => `${a.op} ${a.id}: ${a.detail}`), 'requests the server accepted (logged, or stored) that got no answer').toEqual([]);
      expect(duringDrain.length, 'requests served while draining').toBeGreaterThan(0);
      expect(duringDrain.filter((a) => a.connection !== 'close').map((a) => `${a.op} ${a.id}: Connection ${a.connection ?? 'absent'}`), 'answers while draining without Connection: close').toEqual([]);
      expect(drainProbes.length, '/readyz asked while draining').toBeGreaterThan(0);
      expect(
        drainProbes.filter((p) => p.status !== 503 && p.status !== 'ECONNREFUSED'),
        '/readyz while draining answers 503, until the listener refuses',
      ).toEqual([]);
      expect(drainProbes.filter((p) => p.status === 503 && (p.code !== 'service_unavailable' || p.connection !== 'close')), 'the 503 is an Error service_unavailable with Connection: close').toEqual([]);
      expect(kept.lost, 'acknowledged creates not stored').toEqual([]);
      expect(result.duplicated, 'creates stored twice').toEqual([]);
      expect(result.strangers, 'stored pets no client sent').toEqual([]);
      expect(result.changed, 'stored pets that differ from what was sent or acknowledged').toEqual([]);
    } finally {
      stopped = true;
      await agent.close();
      await probeAgent.close();
      await killAll();
      await store.dispose();
    }
  });
});
