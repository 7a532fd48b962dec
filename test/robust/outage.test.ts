/**
 * Database outage: the production server runs as a child process whose DATABASE_URL points at a
 * TCP proxy in front of PostgreSQL (test/robust/support/tcpProxy.ts), so the database can be taken
 * away from this one server while the shared PostgreSQL server keeps serving everyone else.
 * Two outages, one after the other, on the same server process:
 *
 *   refused     every connection reset, new ones refused (PostgreSQL down, host up)
 *   black hole  connections accepted but nothing answers, established ones stall (a partition)
 *
 * While cut: every API request (listPets, getPet, createPet; one at a time and in a burst) gets a
 * 503 Error body with Retry-After within REQUEST_BOUND_MS, /readyz a 503 within READYZ_BOUND_MS,
 * /healthz a 200; nothing hangs and the process stays up. Keys are checked from the in-memory
 * cache until it is KEY_STALE_MS old, and then every key is answered 503 (fail closed), never 401
 * for a valid key. After the heal, without a restart, requests succeed again within
 * RECOVERY_BOUND_MS, every pet acknowledged before is there unchanged, and no create that was
 * answered 503 is stored, except, after a black hole, one whose INSERT was already on the wire
 * when the server gave up: the partition delivers it late and it commits (counted and printed).
 *
 * PostgreSQL only: skipped when DATABASE_URL is not set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewPet, Pet, PetStatus } from '../../client/index.js';
import { isPet, listAllPets, notAsSent, send, type HttpResponse } from './support/http.js';
import { killAll, postgresStore, startServerProcess, type ServerProcess, type Store } from './support/server.js';
import { startTcpProxy, type TcpProxy } from './support/tcpProxy.js';

/**
 * The promise under test: an API request is answered within this long while the database is
 * gone. The server's own budgets (src/store/database.ts) add up to 3.5 s: 2 s to get a
 * connection (waiting for a pooled one, or opening one), then 1.5 s for the query; the rest is
 * slack for a loaded machine.
 */
const REQUEST_BOUND_MS = 5_000;
/** /readyz gives its ping 2 s (src/pipeline/probes.ts); the rest is slack. */
const READYZ_BOUND_MS = 3_000;
/**
 * After the heal: a key reload that was in flight may need its 3.5 s budget to fail, the next one
 * starts within KEY_REFRESH_MS (2 s), and the pool reconnects on demand; the rest is slack.
 */
const RECOVERY_BOUND_MS = 10_000;
/** The key cache's stale bound and reload interval, as src/server.ts and the default config set them. */
const KEY_STALE_MS = 5_000;
const KEY_REFRESH_MS = 2_000;
/** Long enough to see the key cache go stale and fail closed. */
const OUTAGE_MS = KEY_STALE_MS + 3_000;
const PROBE_EVERY_MS = 250;
/** The server's pool size (src/store/database.ts). */
const POOL_SIZE = 10;
/** More concurrent requests than the pool has connections: some must wait for one. */
const BURST = 3 * POOL_SIZE;
const SEED_PETS = 10;
/** Client-side cutoff: a request still unanswered by then has hung, and says so. */
const CLIENT_TIMEOUT_MS = REQUEST_BOUND_MS + 10_000;

const postgresUrl = process.env.DATABASE_URL || undefined;
if (!postgresUrl) console.warn('[outage] DATABASE_URL is not set: the PostgreSQL outage tests are skipped.');

type Mode = 'refuse' | 'blackhole';
const MODE_LABEL: Record<Mode, string> = { refuse: 'refused', blackhole: 'black hole' };
const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

/** One request and what came of it; times are ms since the cut (or the heal). */
interface Probe {
  what: string;
  /** Which key it carried: the valid one, a well-formed unknown one, or none (health endpoints). */
  key: 'valid' | 'unknown' | 'none';
  sentAt: number;
  ms: number;
  response: HttpResponse | undefined;
  error: string | undefined;
}

interface ErrorBodyShape {
  code?: unknown;
  status?: unknown;
  message?: unknown;
}

function bodyOf(probe: Probe): ErrorBodyShape {
  try {
    return JSON.parse(probe.response?.text ?? '') as ErrorBodyShape;
  } catch {
    return {};
  }
}

/** A 503 Error body with Retry-After: the service's answer to "the database is gone". */
function isServiceUnavailable(probe: Probe): boolean {
  const body = bodyOf(probe);
  return probe.response?.status === 503 && body.code === 'service_unavailable' && body.status === 503 && typeof body.message === 'string' && /^\d+$/.test(String(probe.response.headers['retry-after']));
}

/** The key check itself failed closed (the cache is stale), as opposed to the database call. */
function isKeyCheckUnavailable(probe: Probe): boolean {
  const message = bodyOf(probe).message;
  return isServiceUnavailable(probe) && typeof message === 'string' && message.startsWith('API keys cannot be checked');
}

function describeProbe(probe: Probe): string {
  const answer = probe.response ? `${probe.response.status} ${probe.response.text.slice(0, 160)}` : `no answer (${probe.error})`;
  return `${probe.what} [${probe.key} key] sent at +${probe.sentAt} ms, ${probe.ms} ms: ${answer}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgresUrl)(`database outage on PostgreSQL, through a TCP proxy that is cut and restored${postgresUrl ? '' : ' (skipped: DATABASE_URL is not set)'}`, () => {
  let store: Store | undefined;
  let proxy: TcpProxy | undefined;
  let server: ServerProcess;
  let key: string;
  const unknownKey = `ask_${randomBytes(32).toString('base64url')}`;
  /** Every pet a client saw acknowledged (201), as the 201 said. */
  const acknowledged = new Map<number, Pet>();
  /** Every create body sent, by its unique name. */
  const sent = new Map<string, NewPet>();
  const figures: string[] = [];
  let created = 0;

  const newPet = (label: string): NewPet => {
    const i = created++;
    const pet: NewPet = { name: `outage ${label} #${i}`, categoryId: 1 + (i % 40) };
    if (i % 4 !== 3) pet.status = STATUSES[i % 3] as PetStatus;
    sent.set(pet.name, pet);
    return pet;
  };

  /** Sends one request and times it against `origin` (the cut or the heal). */
  const probe = async (what: 'listPets' | 'getPet' | 'createPet' | 'readyz' | 'healthz', origin: number, keyKind: Probe['key'] = 'valid', body?: NewPet): Promise<Probe> => {
    const root = server.base.replace(/\/v1$/, '');
    const anyId = acknowledged.keys().next().value ?? 1;
    const url = { listPets: `${server.base}/pets?limit=20`, getPet: `${server.base}/pets/${anyId}`, createPet: `${server.base}/pets`, readyz: `${root}/readyz`, healthz: `${root}/healthz` }[what];
    const keyValue = keyKind === 'valid' ? key : keyKind === 'unknown' ? unknownKey : undefined;
    const started = Date.now();
    const result: Probe = { what, key: keyKind, sentAt: started - origin, ms: 0, response: undefined, error: undefined };
    try {
      result.response = await send(url, { method: what === 'createPet' ? 'POST' : 'GET', ...(keyValue ? { key: keyValue } : {}), body: what === 'createPet' ? (body ?? newPet('probe')) : undefined, timeoutMs: CLIENT_TIMEOUT_MS });
    } catch (error) {
      result.error = error instanceof Error ? `${(error as { code?: string }).code ?? ''} ${error.message}` : String(error);
    }
    result.ms = Date.now() - started;
    if (what === 'createPet' && result.response?.status === 201) {
      const pet = JSON.parse(result.response.text) as unknown;
      if (isPet(pet)) acknowledged.set(pet.id, pet);
    }
    return result;
  };

  /** Every pet a client saw acknowledged is stored unchanged; nothing stored that no client sent. */
  const checkStore = async (): Promise<Pet[]> => {
    const listed = await listAllPets(server.base, key);
    const byId = new Map(listed.map((pet) => [pet.id, pet]));
    const lost = [...acknowledged.values()].filter((pet) => JSON.stringify(byId.get(pet.id)) !== JSON.stringify(pet));
    expect(lost.map((pet) => ({ acknowledged: pet, stored: byId.get(pet.id) })), 'acknowledged pets missing or changed').toEqual([]);
    const phantom = notAsSent(listed, sent);
    expect(phantom, 'stored pets that no client sent, stored twice, or stored differently').toEqual([]);
    return listed;
  };

  beforeAll(async () => {
    if (!postgresUrl) return;
    store = await postgresStore(postgresUrl, 'outage');
    const direct = new URL(store.env.DATABASE_URL as string);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(direct);
    proxied.hostname = proxy.host;
    proxied.port = String(proxy.port);
    server = await startServerProcess(store, { DATABASE_URL: proxied.toString(), KEY_REFRESH_MS: String(KEY_REFRESH_MS) });
    expect(server.bootstrapKey, `the first start printed no bootstrap key:\n${server.proc.output()}`).toBeDefined();
    key = server.bootstrapKey as string;
  });

  afterAll(async () => {
    await killAll();
    await proxy?.close();
    await store?.dispose();
    if (figures.length > 0) console.info(`${figures.join('; ')}`);
  });

  async function outage(mode: Mode): Promise<void> {
    if (!proxy) throw new Error('no proxy');
    const label = `outage (${MODE_LABEL[mode]})`;
    const pid = server.pid;
    // Data that must survive the outage, and proof the path through the proxy works.
    for (let i = 0; i < SEED_PETS; i++) {
      const seeded = await probe('createPet', Date.now());
      expect(seeded.response?.status, describeProbe(seeded)).toBe(201);
    }
    const readyBefore = await probe('readyz', Date.now(), 'none');
    expect(readyBefore.response?.status, describeProbe(readyBefore)).toBe(200);
    const idsBefore = new Set(acknowledged.keys());
    // Fill the pool with idle connections, so the first requests of the outage go out on
    // established ones (which the black hole stalls) rather than only on new ones.
    const warm = await Promise.all(Array.from({ length: POOL_SIZE }, () => probe('getPet', Date.now())));
    expect(warm.filter((p) => p.response?.status !== 200).map(describeProbe), 'warm-up reads').toEqual([]);

    const cutAt = Date.now();
    await proxy.cut(mode);
    const probes: Promise<Probe>[] = [];
    const failedCreates: NewPet[] = [];
    const create = () => {
      const body = newPet(mode);
      const p = probe('createPet', cutAt, 'valid', body);
      void p.then((r) => r.response?.status !== 201 && failedCreates.push(body));
      return p;
    };
    let outageProbes: Probe[] = [];
    try {
      // The first wave, all at once: what a client meets first.
      const firstWave = [probe('listPets', cutAt), probe('getPet', cutAt), create(), probe('readyz', cutAt, 'none'), probe('healthz', cutAt, 'none'), probe('listPets', cutAt, 'unknown')];
      probes.push(...firstWave);
      // More at once than the pool has connections: the waiters must be bounded too.
      for (let i = 0; i < BURST; i++) probes.push(i % 3 === 0 ? create() : probe(i % 3 === 1 ? 'listPets' : 'getPet', cutAt));
      // Then a steady trickle until the key cache has long gone stale; launched, not awaited, so
      // slow answers do not thin out the probing.
      for (let round = 0; Date.now() - cutAt < OUTAGE_MS; round++) {
        await sleep(PROBE_EVERY_MS);
        probes.push(probe('listPets', cutAt), probe('listPets', cutAt, 'unknown'), probe('healthz', cutAt, 'none'));
        if (round % 2 === 0) probes.push(create(), probe('getPet', cutAt), probe('readyz', cutAt, 'none'));
      }
      outageProbes = await Promise.all(probes);
      expect(server.proc.running(), `the server exited during the outage:\n${server.proc.output().slice(-3000)}`).toBe(true);
    } finally {
      await proxy.restore();
    }
    const restoredAt = Date.now();

    // ---- During the outage.
    const [list, get, firstCreate, ready, health, stranger] = await Promise.all(probes.slice(0, 6));
    const hung = outageProbes.filter((p) => p.response === undefined);
    expect(hung.map(describeProbe), 'requests that got no answer at all during the outage').toEqual([]);
    const api = outageProbes.filter((p) => p.key === 'valid');
    const notUnavailable = api.filter((p) => !isServiceUnavailable(p));
    expect(notUnavailable.map(describeProbe), 'API requests during the outage answered other than 503 service_unavailable with Retry-After').toEqual([]);
    const slow = api.filter((p) => p.ms > REQUEST_BOUND_MS);
    expect(slow.map(describeProbe), `API requests during the outage answered after more than ${REQUEST_BOUND_MS} ms`).toEqual([]);
    const readyz = outageProbes.filter((p) => p.what === 'readyz');
    const readyBad = readyz.filter((p) => p.response?.status !== 503 || p.ms > READYZ_BOUND_MS);
    expect(readyBad.map(describeProbe), `/readyz during the outage: not a 503 within ${READYZ_BOUND_MS} ms`).toEqual([]);
    const healthBad = outageProbes.filter((p) => p.what === 'healthz' && (p.response?.status !== 200 || p.ms > REQUEST_BOUND_MS));
    expect(healthBad.map(describeProbe), '/healthz during the outage: not a 200').toEqual([]);

    // ---- The key cache: answers from memory while fresh, then fails closed; never a 401 for the valid key.
    const strangers = outageProbes.filter((p) => p.key === 'unknown');
    expect(stranger && stranger.response?.status, `an unknown key right after the cut is refused from the cache: ${stranger && describeProbe(stranger)}`).toBe(401);
    const strangerBad = strangers.filter((p) => p.response?.status !== 401 && !isKeyCheckUnavailable(p));
    expect(strangerBad.map(describeProbe), 'an unknown key during the outage got something other than 401 or the key-check 503').toEqual([]);
    const keyed = [...api, ...strangers].sort((a, b) => a.sentAt - b.sentAt);
    const firstFailClosed = keyed.find(isKeyCheckUnavailable);
    const lastFromCache = strangers.filter((p) => p.response?.status === 401).reduce((latest, p) => Math.max(latest, p.sentAt), 0);
    expect(firstFailClosed, `the key cache never failed closed within ${OUTAGE_MS} ms of the outage`).toBeDefined();
    const failClosedAt = firstFailClosed?.sentAt ?? Infinity;
    // The last good reload was at most KEY_REFRESH_MS (plus its own query) before the cut.
    expect(failClosedAt, 'the key cache failed closed later than its stale bound').toBeLessThanOrEqual(KEY_STALE_MS + 1_000);
    expect(lastFromCache, 'the key cache stopped answering sooner than its stale bound minus one reload interval').toBeGreaterThanOrEqual(KEY_STALE_MS - KEY_REFRESH_MS - 1_000);
    // Once stale, it stays closed: no reload can succeed while the database is gone. (A second of
    // margin: sending order is not arrival order on a loaded machine.)
    const reopened = keyed.filter((p) => p.sentAt > failClosedAt + 1_000 && !isKeyCheckUnavailable(p));
    expect(reopened.map(describeProbe), 'requests let through (or refused with 401) after the key cache had failed closed').toEqual([]);

    // ---- After the heal: recovery without a restart, within the bound.
    let recoveredMs: number | undefined;
    const recoveryProbes: Probe[] = [];
    while (Date.now() - restoredAt <= RECOVERY_BOUND_MS + REQUEST_BOUND_MS) {
      const round = await Promise.all([probe('listPets', restoredAt), probe('getPet', restoredAt), probe('readyz', restoredAt, 'none')]);
      recoveryProbes.push(...round);
      if (round.every((p) => p.response?.status === 200)) {
        recoveredMs = Date.now() - restoredAt;
        break;
      }
      await sleep(200);
    }
    const recoveryHung = recoveryProbes.filter((p) => p.response === undefined || p.ms > REQUEST_BOUND_MS);
    expect(recoveryHung.map(describeProbe), 'requests during the recovery without an answer within the bound').toEqual([]);
    const recoveryOdd = recoveryProbes.filter((p) => p.response?.status !== 200 && !isServiceUnavailable(p) && !(p.what === 'readyz' && p.response?.status === 503));
    expect(recoveryOdd.map(describeProbe), 'answers during the recovery other than 200 or 503 service_unavailable').toEqual([]);
    expect(recoveredMs, `not recovered within ${RECOVERY_BOUND_MS} ms of the heal; last answers:\n${recoveryProbes.slice(-3).map(describeProbe).join('\n')}`).toBeDefined();
    expect(recoveredMs ?? Infinity).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    const after = await probe('createPet', restoredAt);
    expect(after.response?.status, describeProbe(after)).toBe(201);
    expect(server.pid, 'the server was restarted').toBe(pid);
    expect(server.proc.running(), 'the server process is still up').toBe(true);

    // ---- The data: everything acknowledged before (and after) is intact.
    // A black-holed INSERT is delivered when the partition heals; give it a moment to commit.
    await sleep(1_000);
    const listed = await checkStore();
    const storedNames = new Set(listed.map((pet) => pet.name));
    const failedButStored = failedCreates.filter((body) => storedNames.has(body.name));
    expect([...idsBefore].every((id) => listed.some((pet) => pet.id === id)), 'pets acknowledged before the outage are still listed').toBe(true);
    if (mode === 'refuse') {
      // Nothing the server answered 503 ever left it: the connections were refused.
      expect(failedButStored, 'creates answered 503 while the database refused connections, yet stored').toEqual([]);
    }

    const apiMs = api.map((p) => p.ms);
    const first = [list, get, firstCreate].filter((p): p is Probe => p !== undefined);
    const figure =
      `${label}: 503 in ${Math.max(...first.map((p) => p.ms))} ms, readyz 503 in ${ready?.ms} ms, recovered in ${recoveredMs} ms ` +
      `(bounds ${REQUEST_BOUND_MS} / ${READYZ_BOUND_MS} / ${RECOVERY_BOUND_MS} ms; slowest of ${api.length} API 503s ${Math.max(...apiMs)} ms; ` +
      `healthz 200 throughout; key cache answered an unknown key with 401 until +${lastFromCache} ms, failed closed from +${failClosedAt} ms; ` +
      `${failedCreates.length} creates answered 503, ${failedButStored.length} of them stored anyway)`;
    console.info(`[outage] ${figure}; first wave: ${[list, get, firstCreate, ready, health].map((p) => p && `${p.what} ${p.response?.status} in ${p.ms} ms`).join(', ')}`);
    figures.push(figure);
  }

  it('refused: 503 within the bound while connections are refused, recovery without a restart, nothing lost', async () => {
    await outage('refuse');
  });

  it('black hole: 503 within the bound while the database never answers, recovery without a restart, nothing lost', async () => {
    await outage('blackhole');
  });
});
