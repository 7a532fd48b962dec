/**
 * One benchmark run, step by step: build, seed the stores, time cold starts, start the targets,
 * run the interleaved load rounds, read memory, compare a small and a big store, then judge
 * issue 31's goals, print the report and write the results file.
 */
import { join, resolve } from 'node:path';
import { pgbouncerMissing, startPgbouncer } from '../scripts/lib/pgbouncer.js';
import { dropDatabases, makeTempDir, track } from './cleanup.js';
import { runLoad, type RunResult } from './load.js';
import { memoryOf, type Memory } from './measure.js';
import type { BenchOptions } from './options.js';
import { printReport, summarise, writeResults, type Outcome, type RoundResult, type ScenarioSummary } from './report.js';
import { PHOTO_SCENARIOS, photoScenarios } from './photos.js';
import { measureScale } from './scale.js';
import { BASELINES, buildScenarios, deepCursor, FLOOR_NAMES, GET_PET, GET_PET_ONE, judgeGoals, LIST_PETS, OAUTH, oauthScenarios, PEER, POSTGRES_PGBOUNCER, POSTGRES_UNNAMED, sameRound, type DeepCursor, type Scenario } from './scenarios.js';
import { AUDIENCE, clientToken, signingKey, startProvider, WRITER } from '../test/support/oidcProvider.js';
import { log, median, round2, runStarted } from './stats.js';
import { copySqliteStore, prepareSqliteStore, preparePostgresStore, type PreparedStore } from './stores.js';
import { probeWebhooks, startWebhookReceiver, subscribe, WEBHOOKS_ENV, WEBHOOKS_ON, type WebhookProbe, type WebhookReceiver, type WebhookSummary } from './webhooks.js';
import { auth, serverCommand, startApi, startBaseline, startFloor, startOAuthServer, startPeer, stop, type ApiServer, type ServerCommand, type Started } from './targets.js';

interface Seeded {
  store: PreparedStore;
  seedMs: number;
}

async function seed(what: string, prepare: () => Promise<PreparedStore>): Promise<Seeded> {
  const started = performance.now();
  const store = await prepare();
  const seedMs = Math.round(performance.now() - started);
  log(`seeded ${what}${store.target === 'postgres' ? ` ${store.location}` : ''} in ${seedMs} ms`);
  return { store, seedMs };
}

/** The load-test stores: SQLite always, PostgreSQL when DATABASE_URL is set and not --no-postgres. */
async function prepareStores(dir: string, opts: BenchOptions, databaseUrl: string | undefined, notes: string[]) {
  const sqlite = await seed(`${opts.pets} pets into SQLite`, () => prepareSqliteStore(dir, 'load', opts.pets, 'kysely'));
  // Copied before any server opens the store: the peer starts from the very same animals and key.
  const peer = opts.peer ? copySqliteStore(sqlite.store, dir, 'peer') : undefined;
  // The servers with webhooks on get stores of their own (./webhooks.ts): the same animals, one endpoint.
  const hooked: Partial<Record<'sqlite' | 'postgres', PreparedStore>> = {};
  if (opts.webhooks) hooked.sqlite = copySqliteStore(sqlite.store, dir, 'webhooks');
  let postgres: Seeded | undefined;
  if (opts.postgres && databaseUrl) {
    postgres = await seed(`${opts.pets} pets into PostgreSQL`, () => preparePostgresStore(databaseUrl, opts.pets));
    if (opts.webhooks) hooked.postgres = (await seed(`${opts.pets} pets into PostgreSQL (${WEBHOOKS_ON})`, () => preparePostgresStore(databaseUrl, opts.pets))).store;
  } else if (databaseUrl) notes.push('DATABASE_URL is set but --no-postgres skipped PostgreSQL.');
  else notes.push('DATABASE_URL is not set: PostgreSQL scenarios skipped.');
  return { sqlite, peer, hooked, postgres };
}

/** Cold starts one after another, with nothing else running: spawn to the first 200 of the API. */
async function timeColdStarts(store: PreparedStore, command: ServerCommand, opts: BenchOptions): Promise<number[]> {
  const runs: number[] = [];
  for (let i = 0; i < opts.coldStarts; i++) {
    const server = await startApi(store, `cold start ${i + 1}`, command, opts);
    runs.push(round2(server.startMs));
    await stop(server);
  }
  log(`cold start (ms): ${runs.join(', ')}`);
  return runs;
}

interface Target {
  name: string;
  /** Our server's store: the targets of one store run one after another, per scenario. */
  store: string;
  server: ApiServer;
  scenarios: Scenario[];
  /** Our server's deep cursor; a floor server or the peer has none. */
  deep?: Omit<DeepCursor, 'cursor'>;
  /** Our server, rather than a floor server or the peer: its RSS is a goal. */
  ours: boolean;
  /** Our server with webhooks on: what its receiver heard, around each load run. */
  webhooks?: WebhookProbe;
}

/** The scenarios a floor server answers, and the Fastify peer's. */
const FLOOR_SCENARIOS = new Set([LIST_PETS, GET_PET, GET_PET_ONE]);
/** The other checkout's server of --against. */
const BEFORE = 'before';
const PEER_SCENARIOS = new Set<string>([LIST_PETS, GET_PET, GET_PET_ONE, 'createPet', ...PHOTO_SCENARIOS]);

interface Setup {
  targets: Target[];
  baseline: Started;
  /** The key the baseline checks (the SQLite store's). */
  baselineKey: string;
  firstPageBytes: number;
  baselineBodyBytes: number;
  /** The receiver of the servers with webhooks on (undefined with --no-webhooks). */
  receiver: WebhookReceiver | undefined;
}

/** The ceiling: the same bytes as our server's first page, from a bare node:http server. */
async function startCeiling(firstPage: string, key: string): Promise<{ baseline: Started; bodyBytes: number }> {
  const page = JSON.parse(firstPage) as unknown[];
  const body = JSON.stringify(page);
  const baseline = await startBaseline(body, key);
  const check = await fetch(`${baseline.origin}/v1/pets?limit=20`, { headers: auth(key) });
  if (check.status !== 200 || (await check.text()) !== firstPage) throw new Error('the baseline does not answer with the server’s first page');
  log(`baseline body: ${Buffer.byteLength(body)} bytes, ${page.length} pets (the server's first page is ${Buffer.byteLength(firstPage)} bytes)`);
  return { baseline, bodyBytes: Buffer.byteLength(body) };
}

async function startTargets(stores: Awaited<ReturnType<typeof prepareStores>>, command: ServerCommand, opts: BenchOptions, notes: string[]): Promise<Setup> {
  const key = stores.sqlite.store.key;
  const receiver = opts.webhooks ? await startWebhookReceiver() : undefined;
  // Contract 1.3.0's uploads, where the bundled contract has them; each one missing is said, and skipped.
  const uploads = photoScenarios();
  for (const line of uploads.skipped) {
    log(line);
    notes.push(line);
  }
  const sqlite = await startApi(stores.sqlite.store, 'server (sqlite)', command, opts);
  const response = await fetch(`${sqlite.origin}/v1/pets?limit=20`, { headers: auth(key) });
  const firstPage = await response.text();
  if (response.status !== 200) throw new Error(`listPets answered ${response.status}: ${firstPage}`);
  const servers: Array<{ name: string; store: string; server: ApiServer }> = [{ name: 'sqlite', store: 'sqlite', server: sqlite }];
  if (stores.postgres) {
    const store = stores.postgres.store;
    servers.push({ name: 'postgres', store: 'postgres', server: await startApi(store, 'server (postgres)', command, opts) });
    // Behind a transaction pooler (docs/operations.md#behind-a-connection-pooler): the same database
    // directly with unnamed statements (their own cost), then through a PgBouncer in transaction
    // mode with as many server connections as the server's pool.
    const unnamed = { ...store, env: { ...store.env, DATABASE_PREPARED_STATEMENTS: 'off' } };
    servers.push({ name: POSTGRES_UNNAMED, store: 'postgres', server: await startApi(unnamed, `server (${POSTGRES_UNNAMED})`, command, opts) });
    const missing = pgbouncerMissing({ DATABASE_URL: store.env.DATABASE_URL });
    if (missing === undefined) {
      const pooler = await startPgbouncer(store.env.DATABASE_URL ?? '', { poolSize: 10 });
      track(pooler.proc);
      const pooled = { ...unnamed, env: { ...unnamed.env, DATABASE_URL: pooler.through(store.env.DATABASE_URL ?? '') } };
      servers.push({ name: POSTGRES_PGBOUNCER, store: 'postgres', server: await startApi(pooled, `server (${POSTGRES_PGBOUNCER})`, command, opts) });
    } else log(`${POSTGRES_PGBOUNCER} skipped: ${missing}`);
  }
  const targets: Target[] = [];
  for (const { name, store, server } of servers) {
    const { cursor, ...deep } = await deepCursor(server.origin, server.store, 30);
    log(`${name}: deep cursor after ${deep.hops} next links (after id ${deep.afterId ?? '?'})`);
    const scenarios = buildScenarios(cursor, opts.pets, name === 'sqlite', uploads.scenarios);
    targets.push({ name, store, server, scenarios, deep, ours: true });
    if (name !== store) continue;
    if (name === 'sqlite' && opts.against !== undefined) {
      // The other checkout's bundle, with npm start's flags, on the same store: its scenarios are ours.
      const entry = command.args.at(-1) ?? '';
      const before = await startApi(stores.sqlite.store, 'server (sqlite before)', { ...command, args: [...command.args.slice(0, -1), join(resolve(opts.against), entry)] }, opts);
      targets.push({ name: `${name} ${BEFORE}`, store: name, server: before, scenarios, ours: false });
    }
    if (name === 'sqlite') {
      // A real OpenID provider in this process (oidc-provider), its tokens valid for the whole run.
      const provider = await startProvider(await signingKey('bench'), { tokenTtlS: 6 * 3600 });
      provider.server.unref();
      const token = await clientToken(provider.issuer, WRITER, 'pets:read pets:write');
      const oauth = await startOAuthServer(server.store, opts, provider.issuer, AUDIENCE);
      targets.push({ name: `${name} ${OAUTH}`, store: name, server: oauth, scenarios: oauthScenarios(token), ours: false });
    }
    if (name === 'sqlite' && stores.peer) {
      const peer = await startPeer(stores.peer, opts);
      log(`Fastify peer up in ${Math.round(peer.startMs)} ms`);
      targets.push({ name: `${name} ${PEER}`, store: name, server: peer, scenarios: scenarios.filter((s) => PEER_SCENARIOS.has(s.name)), ours: false });
    }
    const hookedStore = stores.hooked[name === 'sqlite' ? 'sqlite' : 'postgres'];
    if (receiver && hookedStore) {
      // Webhooks on: the same server on a store of its own with one endpoint, the bench's receiver; createPet only.
      const path = `/hooks/${name}`;
      await subscribe(hookedStore, receiver.url(path));
      const hookedName = `${name} ${WEBHOOKS_ON}`;
      const hooked = await startApi({ ...hookedStore, env: { ...hookedStore.env, ...WEBHOOKS_ENV } }, `server (${hookedName})`, command, opts);
      const webhooks = await probeWebhooks(hookedName, hookedStore, opts.pets, receiver, path, hooked.pid);
      targets.push({ name: hookedName, store: name, server: hooked, scenarios: scenarios.filter((s) => s.name === 'createPet'), ours: false, webhooks });
    }
    if (!opts.floors) continue;
    for (const router of ['none', 'openapi-backend'] as const) {
      const floor = await startFloor(server.store, router, opts);
      targets.push({ name: `${name} ${FLOOR_NAMES[router]}`, store: name, server: floor, scenarios: scenarios.filter((s) => FLOOR_SCENARIOS.has(s.name)), ours: false });
    }
  }
  // A scenario whose preparation fails (a target without the operation's handler yet) is skipped on that target, saying why.
  for (const tg of targets) {
    for (const scenario of [...tg.scenarios]) {
      try {
        await scenario.prepare?.(tg.server.origin, tg.server.store.key);
      } catch (error) {
        const line = `${scenario.name} skipped on ${tg.name}: ${error instanceof Error ? error.message : String(error)}`;
        log(line);
        notes.push(line);
        tg.scenarios = tg.scenarios.filter((s) => s !== scenario);
      }
    }
  }
  const { baseline, bodyBytes } = await startCeiling(firstPage, key);
  return { targets, baseline, baselineKey: key, firstPageBytes: Buffer.byteLength(firstPage), baselineBodyBytes: bodyBytes, receiver };
}

function describe(r: RunResult, closes: boolean | undefined): string {
  const latency = closes ? 'latency n/a (connection closes)' : `p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms`;
  const other = `${r.cpu.otherPct}%${r.cpu.otherTop ? ` (${r.cpu.otherTop})` : ''}`;
  const trouble = r.unexpected || r.errors ? `; unexpected ${r.unexpected}, errors ${r.errors}: ${JSON.stringify(r.statuses)}` : '';
  return `${r.rps} req/s, ${latency}${Number.isNaN(r.rampMs) ? '' : `, ramp-up ${r.rampMs} ms`}, ${r.cpu.serverUsPerRequest} µs CPU/req (main thread ${r.cpu.serverMainUsPerRequest}), other load ${other}${trouble}`;
}

const runKey = (target: string, scenario: Scenario) => `${target}\u0000${scenario.name}`;

/**
 * --rounds rounds; in each the ceiling first, then each store's scenarios in turn, every target
 * that answers one back to back (in the opposite order every other round), so that the ratios of
 * one round compare runs a few seconds apart and drift over the run hits all of them.
 */
async function runRounds(setup: Setup, opts: BenchOptions): Promise<Map<string, RoundResult[]>> {
  const runs = new Map<string, RoundResult[]>();
  const record = (target: string, scenario: Scenario, r: RoundResult) => runs.set(runKey(target, scenario), [...(runs.get(runKey(target, scenario)) ?? []), r]);
  const perRoundSeconds = (BASELINES.length + setup.targets.reduce((s, tg) => s + tg.scenarios.length, 0)) * (opts.duration + opts.warmup + 0.2);
  log(`${opts.rounds} round(s) of ~${Math.round(perRoundSeconds)} s each`);
  for (let round = 1; round <= opts.rounds; round++) {
    const ceiling: number[] = [];
    for (const scenario of BASELINES) {
      const b = await runLoad(opts.loadGenerator, scenario.request(setup.baseline.origin, setup.baselineKey), scenario.expected, setup.baseline.pid, opts);
      ceiling.push(b.rps);
      record('baseline', scenario, { ...b, baselineRps: b.rps });
      log(`round ${round} baseline ${scenario.name}: ${describe(b, scenario.closes)}`);
    }
    for (const store of new Set(setup.targets.map((tg) => tg.store))) {
      const targets = setup.targets.filter((tg) => tg.store === store);
      if (round % 2 === 0) targets.reverse();
      for (const name of new Set(targets.flatMap((tg) => tg.scenarios.map((s) => s.name)))) {
        for (const tg of targets) {
          const scenario = tg.scenarios.find((s) => s.name === name);
          if (!scenario) continue;
          tg.webhooks?.before();
          const r = await runLoad(opts.loadGenerator, scenario.request(tg.server.origin, tg.server.store.key), scenario.expected, tg.server.pid, opts);
          const baselineRps = (scenario.closes ? ceiling[1] : ceiling[0]) ?? Number.NaN;
          record(tg.name, scenario, { ...r, baselineRps });
          log(`round ${round} ${tg.name} ${scenario.name}: ${describe(r, scenario.closes)}, ${round2(r.rps / baselineRps)}× baseline`);
          // Waits for the run's deliveries, so that none runs into the next target's window.
          if (tg.webhooks) log(`round ${round} ${tg.name} ${scenario.name}: ${await tg.webhooks.after(r)}`);
        }
      }
    }
  }
  return runs;
}

function memoryAfterLoad(setup: Setup): Record<string, Memory> {
  const memory: Record<string, Memory> = {};
  for (const tg of setup.targets) memory[tg.name] = memoryOf(tg.server.pid);
  memory.baseline = memoryOf(setup.baseline.pid);
  log(`RSS after load: ${Object.entries(memory).map(([k, v]) => `${k} ${v.rssMiB} MiB (peak ${v.hwmMiB})`).join(', ')}`);
  return memory;
}

function summariseAll(setup: Setup, runs: Map<string, RoundResult[]>, opts: BenchOptions): ScenarioSummary[] {
  const summaries = [
    ...BASELINES.map((scenario) => summarise('baseline', scenario, runs.get(runKey('baseline', scenario)) ?? [], opts.connections, opts.loadGenerator)),
    ...setup.targets.flatMap((tg) => tg.scenarios.map((scenario) => summarise(tg.name, scenario, runs.get(runKey(tg.name, scenario)) ?? [], opts.connections, opts.loadGenerator))),
  ];
  for (const s of summaries.filter((x) => x.target === 'sqlite')) {
    s.ratioToPeer = sameRound(s, summaries.find((p) => p.target === `sqlite ${PEER}` && p.scenario === s.scenario), (a, b) => a.rps / b.rps);
  }
  return summaries;
}

/** Every event of the hooked servers counted (waiting a little for the last), their stores closed, the receiver stopped. */
async function webhookOutcome(setup: Setup, notes: string[]): Promise<WebhookSummary[]> {
  const outcome: WebhookSummary[] = [];
  for (const tg of setup.targets) {
    if (!tg.webhooks) continue;
    const summary = await tg.webhooks.finish();
    await tg.webhooks.close();
    log(`${tg.name}: ${summary.received} distinct webhook-ids received for ${summary.petsCreated} pets created (${summary.events} events, ${summary.missing} missing, ${summary.duplicates} duplicates); emit → receiver p50 ${summary.lagP50Ms} ms, p99 ${summary.lagP99Ms} ms`);
    outcome.push(summary);
  }
  if (setup.receiver?.malformed) notes.push(`The webhook receiver had ${setup.receiver.malformed} requests that were not a delivery (no webhook-id or no body timestamp).`);
  await setup.receiver?.close();
  return outcome;
}

export async function run(opts: BenchOptions, databaseUrl: string | undefined): Promise<void> {
  const notes: string[] = [];
  log(`options: ${JSON.stringify(opts)}`);
  const command = await serverCommand(opts, notes);
  const dir = makeTempDir();
  const stores = await prepareStores(dir, opts, databaseUrl, notes);
  const coldStarts = await timeColdStarts(stores.sqlite.store, command, opts);
  const setup = await startTargets(stores, command, opts, notes);
  const runs = await runRounds(setup, opts);
  const memory = memoryAfterLoad(setup);
  const webhooks = await webhookOutcome(setup, notes);
  await Promise.all([...setup.targets.map((tg) => stop(tg.server)), stop(setup.baseline)]);
  await dropDatabases();
  const scale = await measureScale(dir, command, opts);
  const summaries = summariseAll(setup, runs, opts);
  const coldStartMs = { runs: coldStarts, median: round2(median(coldStarts)) };
  const outcome: Outcome = {
    opts,
    serverCommand: command.display,
    notes,
    runtimeSeconds: round2((performance.now() - runStarted) / 1000),
    stores: {
      pets: opts.pets,
      seedMs: { sqlite: stores.sqlite.seedMs, postgres: stores.postgres?.seedMs ?? null },
      firstPageBytes: setup.firstPageBytes,
      baselineBodyBytes: setup.baselineBodyBytes,
      deepCursors: Object.fromEntries(setup.targets.flatMap((tg) => (tg.deep ? [[tg.name, tg.deep]] : []))),
    },
    summaries,
    coldStartMs,
    memory,
    scale,
    webhooks,
    goals: judgeGoals({
      summaries,
      webhooks,
      rssMiB: Object.fromEntries(setup.targets.filter((tg) => tg.ours).map((tg) => [tg.name, memory[tg.name]?.rssMiB ?? Number.NaN])),
      coldStartMedianMs: coldStartMs.median,
    }),
  };
  printReport(outcome);
  writeResults(outcome);
}
