/**
 * Graceful shutdown under load: the production server runs as a child process; 100 requests
 * (createPet and listPets) are in flight when it gets SIGTERM. Each request either completes
 * normally (201 with the Pet that was sent, or 200 with a list of pets) or was never accepted
 * (no connection, or the connection ended before a single response byte); nothing is cut off
 * halfway and nothing gets a 5xx. The process exits 0 within the bound, and a restart on the
 * same store has every acknowledged pet, unchanged, and none of the never-accepted ones.
 *
 * The 100, by what the server has of them at the SIGTERM:
 *   continue   createPet with `Expect: 100-continue`: the server answered 100 Continue, so the app
 *              holds the request; the body is sent only after the SIGTERM
 *   half-body  the same, with half the body sent at once; the rest after the SIGTERM
 *   half-head  listPets: the request line and part of the headers; the rest after the SIGTERM
 *              (nothing proves the server read them; they are held to the general rule only)
 *   create     createPet, whole, launched in a burst just before the SIGTERM
 *   list       listPets, whole, launched in the same burst
 * Plus `late`: requests started once the server has logged that it is shutting down, counted
 * apart: the listener is closed, so they must be refused.
 *
 * The groups the server provably held at the SIGTERM (100 Continue received) must complete; the
 * others may also have been never accepted. Clients keep a completed connection open unless told
 * `Connection: close`, as keep-alive agents do, so the printed shutdown time includes that.
 *
 * Nothing here asks /readyz, as for a developer's Ctrl-C or a supervisor without a balancer: the
 * server stops at once, without the drain a prober gets (src/transport/drain.ts), which `late` proves.
 * The drain itself, under load and behind HAProxy: rollingRestart.test.ts.
 *
 * SQLite always; PostgreSQL when DATABASE_URL is set (a database created for the run, dropped after).
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewPet, Pet, PetStatus } from '../../client/index.js';
import { isPet, isPetAsSent, listAllPets, send } from './support/http.js';
import { RawRequest, requestHead, type Outcome } from './support/rawHttp.js';
import { exitWithin, killAll, postgresStore, sqliteStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';

const GROUPS = { continue: 25, 'half-body': 15, 'half-head': 10, create: 25, list: 25 } as const;
type Group = keyof typeof GROUPS | 'late';
const LATE_REQUESTS = 10;
/** The server must exit within this long after SIGTERM (its own grace is 10 s). */
const EXIT_BOUND_MS = 15_000;
/** Bound on each request, from its start to a conclusive outcome. */
const REQUEST_BOUND_MS = 25_000;
const SEED_PETS = 30;

const postgresUrl = process.env.DATABASE_URL || undefined;
if (!postgresUrl) console.warn('[shutdown] DATABASE_URL is not set: the PostgreSQL shutdown run is skipped (SQLite still runs).');

interface InFlight {
  group: Group;
  operation: 'createPet' | 'listPets';
  request: RawRequest;
  /** What is written after the SIGTERM (slow groups only). */
  rest?: string;
  /** createPet only. */
  body?: NewPet;
  /** Whether any response byte had arrived when the SIGTERM was sent. */
  answeredBeforeSigterm?: boolean;
  outcome?: Outcome;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails with `message` unless `promise` settles within `ms` (a bound on waiting, not a timing assertion). */
async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a completed outcome is a valid contract response for its operation and body. */
function validCompletion(flight: InFlight, outcome: Extract<Outcome, { kind: 'completed' }>): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(outcome.body);
  } catch {
    return false;
  }
  if (flight.operation === 'listPets') return outcome.status === 200 && Array.isArray(parsed) && parsed.every(isPet);
  return outcome.status === 201 && flight.body !== undefined && isPetAsSent(parsed, flight.body);
}

function describeOutcome(outcome: Outcome | undefined): string {
  if (!outcome) return 'no outcome';
  switch (outcome.kind) {
    case 'completed':
      return `${outcome.status}${outcome.interim.length ? ` (after ${outcome.interim.join(',')})` : ''}`;
    case 'refused':
    case 'closed-before-response':
      return `${outcome.kind} (${outcome.code})`;
    case 'cut-off':
      return `cut off (${outcome.code}) after ${JSON.stringify(outcome.received.slice(0, 200))}`;
    case 'timeout':
      return `timeout after ${JSON.stringify(outcome.received.slice(0, 200))}`;
  }
}

async function shutdownUnderLoad(store: Store, label: string): Promise<void> {
  let server: ServerProcess = await startServerProcess(store, { LOG_LEVEL: 'info' });
  const key = server.bootstrapKey;
  expect(key, `the first start printed no bootstrap key:\n${server.proc.output()}`).toBeDefined();
  if (key === undefined) return;
  const hostHeader = `${server.host}:${server.port}`;
  const sent = new Map<string, NewPet>();
  const acknowledged = new Map<number, Pet>();

  // Something to list.
  for (let i = 0; i < SEED_PETS; i++) {
    const body: NewPet = { name: `shutdown seed #${i}`, categoryId: 1 + (i % 7) };
    sent.set(body.name, body);
    const response = await send(`${server.base}/pets`, { method: 'POST', key, body });
    expect(response.status, response.text).toBe(201);
    const pet = JSON.parse(response.text) as Pet;
    acknowledged.set(pet.id, pet);
  }

  const flights: InFlight[] = [];
  const target = { host: server.host, port: server.port, timeoutMs: REQUEST_BOUND_MS, keepOpen: true };
  const statuses: readonly (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined];
  const create = (group: Group, i: number, split: 'none' | 'continue' | 'half-body'): InFlight => {
    const body: NewPet = { name: `shutdown ${group} #${i}`, categoryId: 1 + (i % 9) };
    const status = statuses[i % statuses.length];
    if (status) body.status = status;
    sent.set(body.name, body);
    const json = JSON.stringify(body);
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(json)) };
    if (split === 'none') return { group, operation: 'createPet', body, request: new RawRequest(requestHead('POST', '/v1/pets', hostHeader, headers) + json, target) };
    // The server answers 100 Continue once it has parsed the headers and handed the request to the app.
    const head = requestHead('POST', '/v1/pets', hostHeader, { ...headers, Expect: '100-continue' });
    const cut = split === 'continue' ? 0 : Math.floor(json.length / 2);
    return { group, operation: 'createPet', body, request: new RawRequest(head + json.slice(0, cut), target), rest: json.slice(cut) };
  };
  const list = (group: Group, i: number, split: boolean): InFlight => {
    const head = requestHead('GET', `/v1/pets?limit=${[5, 20, 100][i % 3]}`, hostHeader, { Authorization: `Bearer ${key}` });
    if (!split) return { group, operation: 'listPets', request: new RawRequest(head, target) };
    // Up to the middle of the Authorization header: the parser has begun the message, the headers are incomplete.
    const cut = head.indexOf('Authorization') + 20;
    return { group, operation: 'listPets', request: new RawRequest(head.slice(0, cut), target), rest: head.slice(cut) };
  };

  const late: InFlight[] = [];
  let sigtermAt = 0;
  let exitAfterMs: number | undefined;
  try {
    // The slow ones first, and proof the server holds them.
    for (let i = 0; i < GROUPS.continue; i++) flights.push(create('continue', i, 'continue'));
    for (let i = 0; i < GROUPS['half-body']; i++) flights.push(create('half-body', i, 'half-body'));
    for (let i = 0; i < GROUPS['half-head']; i++) flights.push(list('half-head', i, true));
    await within(Promise.all(flights.map((f) => f.request.connected)), 10_000, 'the slow requests did not all connect within 10 s');
    const held = flights.filter((f) => f.group === 'continue' || f.group === 'half-body');
    await within(Promise.all(held.map((f) => f.request.firstResponseByte)), 10_000, 'the server did not answer 100 Continue to every Expect request within 10 s');
    expect(held.every((f) => f.request.interim.includes(100) && !f.request.isSettled()), 'every Expect request got 100 Continue, and nothing more yet').toBe(true);
    // Let the partial headers reach the server's parser (nothing observable says they have).
    await sleep(500);

    // The burst: connected and written (net.Socket flushes the queued request on 'connect', before
    // our promise continuation runs), then the SIGTERM at once. These race the shutdown.
    const burst: InFlight[] = [];
    for (let i = 0; i < GROUPS.create; i++) burst.push(create('create', i, 'none'));
    for (let i = 0; i < GROUPS.list; i++) burst.push(list('list', i, false));
    flights.push(...burst);
    expect(flights.length).toBe(100);
    await within(Promise.all(burst.map((f) => f.request.connected)), 10_000, 'the burst did not connect within 10 s');
    // A single synchronous pass: nothing can arrive between these reads and the kill.
    for (const f of flights) f.answeredBeforeSigterm = f.request.isSettled();
    sigtermAt = Date.now();
    server.proc.child.kill('SIGTERM');
    const exited = server.proc.exited.then((exit) => {
      exitAfterMs = Date.now() - sigtermAt;
      return exit;
    });

    // Once the server says it is shutting down (it closes the listener in the same tick): new
    // requests, not part of the 100; then the rest of the slow ones, staggered.
    for (let waited = 0; !server.proc.output().includes('shutting down'); waited += 10) {
      if (waited > 10_000) throw new Error(`no "shutting down" log line within 10 s of SIGTERM:\n${server.proc.output().slice(-3000)}`);
      await sleep(10);
    }
    for (let i = 0; i < LATE_REQUESTS; i++) {
      await sleep(20);
      late.push(i % 2 === 0 ? create('late', i, 'none') : list('late', i, false));
    }
    const slow = flights.filter((f) => f.rest !== undefined);
    for (const [i, f] of slow.entries()) {
      if (i % 10 === 0) await sleep(100);
      void f.request.write(f.rest as string);
    }

    const outcomes = await Promise.all([...flights, ...late].map((f) => f.request.outcome));
    [...flights, ...late].forEach((f, i) => (f.outcome = outcomes[i]));
    const exit = await exitWithin(server, EXIT_BOUND_MS);
    await exited.catch(() => undefined);

    // ---- What each client saw.
    const table = new Map<string, Map<string, number>>();
    for (const f of [...flights, ...late]) {
      const row = table.get(f.group) ?? new Map<string, number>();
      const kind = f.outcome?.kind === 'completed' ? `completed ${f.outcome.status}` : describeOutcome(f.outcome);
      row.set(kind, (row.get(kind) ?? 0) + 1);
      table.set(f.group, row);
    }
    const count = (fs: InFlight[], kinds: Outcome['kind'][]) => fs.filter((f) => f.outcome && kinds.includes(f.outcome.kind)).length;
    const completed = count(flights, ['completed']);
    const refused = count(flights, ['refused']);
    const closedEarly = count(flights, ['closed-before-response']);
    const keptOpen = flights.filter((f) => f.outcome?.kind === 'completed' && f.outcome.headers.connection?.toLowerCase() !== 'close');
    const closeDelays = keptOpen.map((f) => f.request.serverClosedAfterMs).filter((ms): ms is number => ms !== undefined);
    const lingered = closeDelays.filter((ms) => ms >= 1_000).length;
    console.info(
      `[${label}] 100 requests in flight at SIGTERM (${flights.filter((f) => f.answeredBeforeSigterm).length} of them had already settled): ` +
        `completed ${completed}, refused (no connection) ${refused}, closed before any response byte ${closedEarly}; ` +
        `exit code ${exit?.code ?? 'none'}${exit?.signal ? ` (signal ${exit.signal})` : ''}; shutdown took ${exitAfterMs ?? '>' + EXIT_BOUND_MS} ms\n` +
        [...table].map(([group, row]) => `    ${group.padEnd(10)} ${[...row].map(([kind, n]) => `${n} ${kind}`).join(', ')}`).join('\n') +
        `\n    ${keptOpen.length} completed responses left the connection open (no Connection: close); the server closed those ` +
        `${closeDelays.length ? `${Math.min(...closeDelays)}–${Math.max(...closeDelays)} ms after the response; ${lingered} of them only after a second or more (the keep-alive timeout), holding up the exit` : 'never (the client did)'}`,
    );

    // ---- The assertions: every one of the 100 completed normally or was never accepted.
    const bad = flights.filter((f) => {
      const o = f.outcome;
      if (!o) return true;
      if (o.kind === 'completed') return !validCompletion(f, o);
      return o.kind !== 'refused' && o.kind !== 'closed-before-response';
    });
    expect(
      bad.map((f) => `${f.group} ${f.operation} ${f.body?.name ?? ''}: ${describeOutcome(f.outcome)}${f.outcome?.kind === 'completed' ? ` ${f.outcome.body.slice(0, 200)}` : ''}`),
      'requests neither completed normally nor never accepted (cut off, 5xx, invalid, or hung)',
    ).toEqual([]);
    // The server held these at the SIGTERM (it had answered 100 Continue): they must have finished.
    const heldNotFinished = held.filter((f) => f.outcome?.kind !== 'completed');
    expect(heldNotFinished.map((f) => `${f.group} ${f.body?.name ?? f.operation}: ${describeOutcome(f.outcome)}`), 'requests the server held at SIGTERM that it did not finish').toEqual([]);
    const lateBad = late.filter((f) => f.outcome?.kind !== 'refused');
    expect(lateBad.map((f) => `${f.operation}: ${describeOutcome(f.outcome)}`), 'requests started after SIGTERM must find the listener closed').toEqual([]);

    expect(exit, `the server did not exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${server.proc.output().slice(-3000)}`).toBeDefined();
    expect(exit?.code, `exit after SIGTERM:\n${server.proc.output().slice(-3000)}`).toBe(0);

    // The server's own log: no 5xx, and it said it stopped.
    const logs = server.proc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; status?: number; level?: number });
    expect(logs.filter((l) => l.msg === 'request' && (l.status ?? 0) >= 500), 'requests the server logged with a 5xx').toEqual([]);
    expect(logs.filter((l) => (l.level ?? 0) >= 50), 'error or fatal log lines').toEqual([]);
    expect(logs.some((l) => l.msg === 'stopped'), 'the log says "stopped"').toBe(true);

    for (const f of flights) {
      if (f.outcome?.kind === 'completed' && f.operation === 'createPet') {
        const pet = JSON.parse(f.outcome.body) as Pet;
        expect(acknowledged.has(pet.id), `id ${pet.id} acknowledged twice`).toBe(false);
        acknowledged.set(pet.id, pet);
      }
    }

    // ---- Restart on the same store: every acknowledged pet, unchanged; none of the never-accepted.
    server = await startServerProcess(store);
    const listed = await listAllPets(server.base, key);
    const byId = new Map(listed.map((pet) => [pet.id, pet]));
    const lost = [...acknowledged.values()].filter((pet) => !isDeepStrictEqual(byId.get(pet.id), pet));
    expect(lost.map((pet) => ({ acknowledged: pet, stored: byId.get(pet.id) })), 'acknowledged pets missing or changed after the restart').toEqual([]);
    const names = new Map(listed.map((pet) => [pet.name, pet]));
    expect(names.size, 'a pet was stored twice').toBe(listed.length);
    const neverAccepted = [...flights, ...late].filter((f) => f.operation === 'createPet' && f.outcome?.kind !== 'completed');
    const storedAnyway = neverAccepted.filter((f) => f.body && names.has(f.body.name));
    expect(
      storedAnyway.map((f) => `${f.group} ${f.body?.name}: client saw ${describeOutcome(f.outcome)}, yet it is stored as ${JSON.stringify(names.get(f.body?.name ?? ''))}`),
      'creates the client saw as never accepted, yet stored',
    ).toEqual([]);
    const phantom = listed.filter((pet) => {
      const body = sent.get(pet.name);
      return body === undefined || !isPetAsSent(pet, body);
    });
    expect(phantom, 'stored pets that no client sent, or stored differently').toEqual([]);
    expect(listed.length, 'exactly the acknowledged pets are stored').toBe(acknowledged.size);
    const second = await stopServer(server);
    expect(second.code).toBe(0);
    console.info(
      `[${label}] after the restart: all ${acknowledged.size} acknowledged pets (${SEED_PETS} before the load, ${acknowledged.size - SEED_PETS} answered 201 during the shutdown) ` +
        `present and unchanged; ${neverAccepted.length} never-accepted creates absent; no other pet stored`,
    );
  } finally {
    for (const f of [...flights, ...late]) f.request.release();
    await killAll();
  }
}

describe('graceful shutdown: SIGTERM with 100 requests in flight', () => {
  afterAll(killAll);

  it('sqlite: every in-flight request completes or was never accepted, exit 0, no acknowledged write lost', async () => {
    const store = sqliteStore('shutdown');
    try {
      await shutdownUnderLoad(store, 'shutdown sqlite');
    } finally {
      await killAll();
      await store.dispose();
    }
  });

  it.skipIf(!postgresUrl)(
    `postgres: every in-flight request completes or was never accepted, exit 0, no acknowledged write lost${postgresUrl ? '' : ' (skipped: DATABASE_URL is not set)'}`,
    async () => {
      if (!postgresUrl) return;
      const store = await postgresStore(postgresUrl, 'shutdown');
      try {
        await shutdownUnderLoad(store, 'shutdown postgres');
      } finally {
        await killAll();
        await store.dispose();
      }
    },
  );
});
