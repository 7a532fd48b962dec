/** What is measured: the load scenarios against each target, and issue 31's goals judged from them. */
import { nextLink } from '../client/index.js';
import { createCursorCodec } from '../src/domain/cursor.js';
import type { LoadRequest } from './load.js';
import type { PreparedStore } from './stores.js';
import { auth } from './targets.js';
import { median, round2 } from './stats.js';
import { allDelivered, WEBHOOKS_ON, type WebhookSummary } from './webhooks.js';

export interface Scenario {
  name: string;
  expected: number;
  /**
   * The server closes the connection after each response. autocannon then writes one request
   * into the closing socket that never gets an answer and does not drop it from its queue, so
   * its response times are wrong (they grow with the run); only req/s means something, and the
   * baseline to compare with is one that closes too.
   */
  closes?: boolean;
  /** Run once per target before the rounds (getPetPhoto stores the photo it reads). */
  prepare?(origin: string, key: string): Promise<void>;
  request(origin: string, key: string): LoadRequest;
}

/** Names the goals read: two scenarios, and the targets beside our server on a store (./run.ts prefixes the store). */
export const PEER = 'Fastify peer';
export const FLOOR_NAMES = { none: 'floor, no router', 'openapi-backend': 'floor + openapi-backend' } as const;
export const GET_PET = 'getPet (ids across store)';
/** One id over and over, as the independent wrk measurement of issue 31 did: the row cache-friendly code wins on. */
export const GET_PET_ONE = 'getPet (one id)';
export const LIST_PETS = 'listPets limit=20';
/** The server on the contract with an oauth2 scheme beside the key (./oauthServer.ts), and its two ways to call getPet. */
export const OAUTH = 'OAuth2 spec';
export const GET_PET_KEY = 'getPet (one id, API key)';
export const GET_PET_TOKEN = 'getPet (one id, OAuth2 token)';

/** getPet of one id on the OAuth2 spec's server, with the store's key and with `token`: a token's cost against a key's. */
export function oauthScenarios(token: string): Scenario[] {
  return [
    { name: GET_PET_KEY, expected: 200, request: (o, k) => ({ url: `${o}/v1/pets/1`, headers: auth(k) }) },
    { name: GET_PET_TOKEN, expected: 200, request: (o) => ({ url: `${o}/v1/pets/1`, headers: { Authorization: `Bearer ${token}` } }) },
  ];
}

const BAD_KEY = `ask_${'A'.repeat(43)}`;

/** Against the baseline, in this order: a scenario that `closes` compares with the second. */
export const BASELINES: readonly Scenario[] = [
  { name: 'listPets limit=20 (constant body)', expected: 200, request: (o, k) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(k) }) },
  { name: '401 bad key (closes, like the server)', expected: 401, closes: true, request: (o) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(BAD_KEY) }) },
];

/** At most this many distinct paths in a cycle: wrk holds them in its script. */
const MAX_PATHS = 10_000;

/** getPet over the ids of a store of `pets`, scattered: a stride co-prime with the store size. */
function getPetAcrossStore(pets: number): Scenario {
  const paths = Array.from({ length: Math.min(pets, MAX_PATHS) }, (_, n) => `/v1/pets/${((n * 7919) % pets) + 1}`);
  return { name: GET_PET, expected: 200, request: (o, k) => ({ url: `${o}${paths[0]}`, headers: auth(k), paths }) };
}

/**
 * The scenarios against our server; `withFloor` adds GET /healthz (run on SQLite only); `uploads`
 * are the upload scenarios the contract allows (./photos.ts), last.
 */
export function buildScenarios(deepCursor: string, pets: number, withFloor: boolean, uploads: readonly Scenario[] = []): Scenario[] {
  // Diagnostic, not in the brief: the server's listener, security headers and request id alone
  // (no key, no validation, no database), to split the cost between HTTP and the rest.
  const floor: Scenario = { name: 'GET /healthz (server floor: no key, no store)', expected: 200, request: (o) => ({ url: `${o}/healthz` }) };
  const list = (name: string, query: string): Scenario => ({ name, expected: 200, request: (o, k) => ({ url: `${o}/v1/pets?${query}`, headers: auth(k) }) });
  return [
    ...(withFloor ? [floor] : []),
    list(LIST_PETS, 'limit=20'),
    list('listPets limit=100', 'limit=100'),
    list('listPets status+deep cursor', `status=sold&limit=20&cursor=${encodeURIComponent(deepCursor)}`),
    getPetAcrossStore(pets),
    { name: GET_PET_ONE, expected: 200, request: (o, k) => ({ url: `${o}/v1/pets/1`, headers: auth(k) }) },
    { name: '401 bad key', expected: 401, closes: true, request: (o) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(BAD_KEY) }) },
    { name: '400 limit=0', expected: 400, request: (o, k) => ({ url: `${o}/v1/pets?limit=0`, headers: auth(k) }) },
    { name: 'createPet', expected: 201, request: (o, k) => ({ url: `${o}/v1/pets`, method: 'POST', headers: { ...auth(k), 'Content-Type': 'application/json' }, body: '{"name":"Bench Biscuit","categoryId":3}' }) },
    ...uploads,
  ];
}

export interface DeepCursor {
  cursor: string;
  hops: number;
  /** Where the cursor stands, for the report (read with the store's secret: cursors are opaque to clients). */
  afterId: number | undefined;
}

/** Follows `next` links from `/v1/pets?status=sold&limit=100`, as a client would, `hops` pages deep. */
export async function deepCursor(origin: string, store: PreparedStore, hops: number): Promise<DeepCursor> {
  let path: string | undefined = '/v1/pets?status=sold&limit=100';
  let cursor: string | undefined;
  let done = 0;
  while (path && done < hops) {
    const response = await fetch(`${origin}${path}`, { headers: auth(store.key) });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${body}`);
    const next = nextLink(response.headers.get('link'));
    if (!next) break;
    cursor = new URL(next, origin).searchParams.get('cursor') ?? undefined;
    path = next;
    done++;
  }
  if (!cursor) throw new Error('the store gave no next link: too few pets to page through');
  return { cursor, hops: done, afterId: createCursorCodec(store.secret).decode(cursor)?.afterId };
}

/** One run of a scenario against a target: what a goal reads of it. */
interface RoundFigures {
  rps: number;
  cpu: { serverUsPerRequest: number };
}

/** A target's scenario over the rounds, in round order. */
export interface Figures {
  target: string;
  scenario: string;
  rps: number;
  perRound: readonly RoundFigures[];
}

/** The median over rounds of `f(a's run, b's run of the same round)`: NaN when either never ran. */
export function sameRound(a: Figures | undefined, b: Figures | undefined, f: (x: RoundFigures, y: RoundFigures) => number): number {
  if (!a || !b) return Number.NaN;
  return round2(median(a.perRound.flatMap((x, i) => (b.perRound[i] ? [f(x, b.perRound[i])] : []))));
}

export interface Goal {
  goal: string;
  value: string;
  /** Undefined when what it reads was not run (no PostgreSQL, --no-peer, --no-floors). */
  pass: boolean | undefined;
}

export interface GoalInput {
  summaries: readonly Figures[];
  /** Our servers' RSS after load, by store. */
  rssMiB: Readonly<Record<string, number>>;
  coldStartMedianMs: number;
  /** What the receiver of each server with webhooks on heard (none with --no-webhooks). */
  webhooks: readonly WebhookSummary[];
}

/** Our PostgreSQL server with DATABASE_PREPARED_STATEMENTS=off, directly and through a transaction-mode PgBouncer. */
export const POSTGRES_UNNAMED = 'postgres unnamed';
export const POSTGRES_PGBOUNCER = 'postgres PgBouncer';

/** `measured` against `limit` (at least, or at most when `atMost`); NaN is a goal not run. */
function goal(name: string, measured: number, limit: number, value: string, atMost = false): Goal {
  if (Number.isNaN(measured)) return { goal: name, value: 'not run', pass: undefined };
  return { goal: name, value, pass: atMost ? measured <= limit : measured >= limit };
}

/** Issue 31's goals, each met, missed or not run (reported, never enforced). */
export function judgeGoals(input: GoalInput): Goal[] {
  const find = (target: string, scenario: string) => input.summaries.find((s) => s.target === target && s.scenario === scenario);
  const goals: Goal[] = [];
  for (const [scenario, limit] of [[GET_PET_ONE, 1.2], [GET_PET, 1.2], [LIST_PETS, 1.2], ['createPet', 3]] as const) {
    const ours = find('sqlite', scenario);
    const peer = find(`sqlite ${PEER}`, scenario);
    const ratio = sameRound(ours, peer, (a, b) => a.rps / b.rps);
    goals.push(goal(`SQLite ${scenario} ≥ ${limit.toFixed(1)}× the Fastify peer's req/s`, ratio, limit, `${ratio}× (${ours?.rps} vs ${peer?.rps} req/s)`));
  }
  for (const store of ['sqlite', 'postgres']) {
    const layer = sameRound(find(`${store} ${FLOOR_NAMES['openapi-backend']}`, GET_PET), find(`${store} ${FLOOR_NAMES.none}`, GET_PET), (a, b) => a.cpu.serverUsPerRequest - b.cpu.serverUsPerRequest);
    if (store === 'sqlite' || !Number.isNaN(layer)) goals.push(goal(`${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} getPet: openapi-backend's layer ≤ 10 µs of server CPU per request`, layer, 10, `${layer} µs (floor + openapi-backend − floor without router)`, true));
  }
  for (const scenario of [LIST_PETS, GET_PET]) {
    const ours = find('postgres', scenario);
    const floor = find(`postgres ${FLOOR_NAMES.none}`, scenario);
    const ratio = sameRound(ours, floor, (a, b) => a.rps / b.rps);
    goals.push(goal(`PostgreSQL ${scenario} ≥ 0.9× its no-router floor's req/s`, ratio, 0.9, `${ratio}× (${ours?.rps} vs ${floor?.rps} req/s)`));
  }
  // Issue 41: behind a transaction pooler, at least 0.8x the direct connection (named statements).
  for (const scenario of [LIST_PETS, GET_PET, 'createPet']) {
    const ours = find('postgres', scenario);
    const pooled = find(POSTGRES_PGBOUNCER, scenario);
    if (pooled === undefined) continue;
    const ratio = sameRound(pooled, ours, (a, b) => a.rps / b.rps);
    goals.push(goal(`PostgreSQL ${scenario} through PgBouncer ≥ 0.8× direct req/s`, ratio, 0.8, `${ratio}× (${pooled.rps} vs ${ours?.rps} req/s)`));
  }
  // Issue 47: a verified token costs about what a key does (it is kept until it expires, as keys are kept).
  const token = find(`sqlite ${OAUTH}`, GET_PET_TOKEN);
  const key = find(`sqlite ${OAUTH}`, GET_PET_KEY);
  const tokenRatio = sameRound(token, key, (a, b) => a.rps / b.rps);
  goals.push(goal('getPet with an OAuth2 token ≥ 0.85× the same call with an API key (one server, same rounds)', tokenRatio, 0.85, `${tokenRatio}× (${token?.rps} vs ${key?.rps} req/s)`));
  // The webhooks issue: delivering each create's event to one endpoint costs the create at most a fifth, and loses none.
  for (const store of ['sqlite', 'postgres']) {
    const hooked = find(`${store} ${WEBHOOKS_ON}`, 'createPet');
    const plain = find(store, 'createPet');
    const summary = input.webhooks.find((w) => w.target === `${store} ${WEBHOOKS_ON}`);
    if (store === 'postgres' && summary === undefined) continue;
    const label = store === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const ratio = sameRound(hooked, plain, (a, b) => a.rps / b.rps);
    goals.push(goal(`${label} createPet with webhooks on (one endpoint) ≥ 0.8× without a subscriber (same rounds)`, ratio, 0.8, `${ratio}× (${hooked?.rps} vs ${plain?.rps} req/s)`));
    const lost = summary === undefined ? Number.NaN : allDelivered(summary) ? 0 : 1;
    goals.push(goal(`${label}: every createPet's event delivered with webhooks on`, lost, 0, summary ? `${summary.received} distinct webhook-ids for ${summary.petsCreated} pets created, ${summary.missing} missing` : '', true));
  }
  const rss = input.rssMiB.sqlite ?? Number.NaN;
  const postgres = input.rssMiB.postgres === undefined ? '' : `; PostgreSQL's server ${input.rssMiB.postgres} MiB, not judged`;
  goals.push(goal('RSS after load ≤ 120 MiB (SQLite server)', rss, 120, `${rss} MiB${postgres}`, true));
  goals.push(goal('cold start ≤ 400 ms (spawn → first API answer, median)', input.coldStartMedianMs, 400, `${input.coldStartMedianMs} ms`, true));
  return goals;
}
