/**
 * Property-based fuzzing of every operation of the contract against the production server in a
 * child process: the three pet operations each against a model that predicts its answers, every
 * other one (the photos', and whatever the spec adds) from what the spec declares of it alone
 * (support/fuzz/anyOperationCases.ts). Requests are generated from the spec (generated/openapi.json, read at test time):
 * valid ones from each schema's types, bounds, lengths, patterns and enums; invalid ones by
 * breaking exactly those, plus malformed JSON, deep nesting, bodies around the size limit, odd
 * media types, headers and query strings, and bad keys. A parameter the spec gives an example is
 * also sent that example with its numbers drawn again (a Range's `bytes=0-1023`), and a body of
 * bytes the spec's example files (`x-example-file`: a photo) as often as random ones, writers
 * first: so a stored photo is read back in ranges and under conditions, and every other
 * operation must have answered at least one success.
 *
 * Every response must: have a status the operation declares (or its `default` names), never be
 * a 5xx, carry an Error (Ajv against the spec's schema) whose `status` is the HTTP status on any
 * non-2xx, and have the declared headers. Valid requests must get exactly the answer the store
 * model predicts; a created pet must read back byte for byte. After each batch the process must
 * still run and answer /healthz; at the end, the pets seeded first are unchanged and the store
 * holds exactly the seeds plus one pet per 201.
 *
 * FUZZ_SEED=<int> replays or varies a run (the seed is printed). PostgreSQL runs too when
 * DATABASE_URL is set.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../client/index.js';
import { listAllPets } from './support/http.js';
import { killAll, postgresStore, sqliteStore, startServerProcess, type ServerProcess, type Store } from './support/server.js';
import type { InvalidCase, IssuedCursor } from './support/fuzz/cases.js';
import { anyOperationCases } from './support/fuzz/anyOperationCases.js';
import { validCreateCases, invalidCreateCases, validPet } from './support/fuzz/createPetCases.js';
import { invalidGetCases, validGetCases } from './support/fuzz/getPetCases.js';
import { Harness } from './support/fuzz/harness.js';
import { serialize } from './support/fuzz/jsonText.js';
import { REGRESSIONS } from './support/fuzz/regressions.js';
import { invalidListCases, validListCases } from './support/fuzz/listPetsCases.js';
import { StoreModel } from './support/fuzz/model.js';
import { ResponseContract } from './support/fuzz/responseContract.js';
import { fuzzSeed, propertySeed, runCases } from './support/fuzz/run.js';
import { loadContract, operation } from './support/fuzz/spec.js';
import { Tally } from './support/fuzz/tally.js';
import { Wire, type WireRequest } from './support/fuzz/wire.js';

/** Generated cases per modelled operation: valid + invalid ≥ 1000, split over parallel streams; `other`: per operation without a model. */
const RUNS = { valid: 500, invalid: 1000, other: 400 } as const;
/** Streams of each kind in flight at once: modest concurrency on a shared 2-core machine. */
const STREAMS = 2;
const SEED_PETS = 40;

const seed = fuzzSeed();
const postgresUrl = process.env.DATABASE_URL || undefined;

// Read once, before the suites are defined: the generators are built from it at definition time.
const contract = await loadContract();

function fuzzSuite(label: string, makeStore: () => Promise<Store>): void {
  const checker = new ResponseContract(contract);
  const ops = { listPets: operation(contract, 'listPets'), createPet: operation(contract, 'createPet'), getPet: operation(contract, 'getPet') };
  const model = new StoreModel();
  const tally = new Tally();
  const regressionTally = new Tally();
  let store: Store;
  let server: ServerProcess;
  let wire: Wire;
  let harness: Harness;
  let key = '';
  /** getPet bytes of every seeded pet, before any fuzzing. */
  const snapshot = new Map<number, string>();
  const issued: IssuedCursor[] = [];
  const started = Date.now();

  /** Properties run at once, each split over STREAMS streams; then the server must have survived them all. */
  async function fuzzStreams(properties: ReadonlyArray<{ label: string; run: (label: string, numRuns: number) => Promise<void>; numRuns: number }>): Promise<void> {
    const streams = properties.flatMap(({ label: name, run, numRuns }) => Array.from({ length: STREAMS }, (_, s) => run(`${name} #${s}`, Math.ceil(numRuns / STREAMS))));
    const results = await Promise.allSettled(streams);
    // The batch is over: whatever it found, the server must have survived it.
    await harness.healthy();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Valid and invalid cases of one operation, each kind split over STREAMS concurrent properties. */
  function fuzzOperation<V extends { family: string; wire: WireRequest }>(name: string, valid: fc.Arbitrary<V>, checkValid: (c: V) => Promise<void>, invalid: fc.Arbitrary<InvalidCase>, checkInvalid: (c: InvalidCase) => Promise<void>): Promise<void> {
    return fuzzStreams([
      { label: `${name} valid`, run: (l, numRuns) => runCases(l, valid, checkValid, { seed, numRuns }), numRuns: RUNS.valid },
      { label: `${name} invalid`, run: (l, numRuns) => runCases(l, invalid, checkInvalid, { seed, numRuns }), numRuns: RUNS.invalid },
    ]);
  }

  describe(`fuzz (${label})`, () => {
    beforeAll(async () => {
      console.log(`fuzz: seed ${seed} (FUZZ_SEED=${seed} replays this run)`);
      store = await makeStore();
      server = await startServerProcess(store);
      if (!server.bootstrapKey) throw new Error(`no bootstrap key:\n${server.proc.output()}`);
      key = server.bootstrapKey;
      wire = new Wire(server.host, server.port, 4 * STREAMS);
      harness = new Harness({ contract, checker, wire, model, tally, key, origin: new URL(server.base).origin, alive: () => server.proc.running(), output: () => server.proc.output() });

      // Seed pets drawn from the same schema (every status present), through the API, each checked;
      // counted apart from the fuzzing figures.
      const seeding = new Harness({ contract, checker, wire, model, tally: new Tally(), key, origin: new URL(server.base).origin, alive: () => server.proc.running(), output: () => server.proc.output() });
      const pets = fc.sample(validPet({ contract, op: ops.createPet, key }), { seed: propertySeed(seed, 'seed pets'), numRuns: SEED_PETS });
      for (const [i, { value, pet }] of pets.entries()) {
        const statuses = ['available', 'pending', 'sold'];
        const sent = i < statuses.length ? { ...pet, status: statuses[i] } : pet;
        const body = i < statuses.length ? Buffer.from(JSON.stringify(sent)) : Buffer.from(serialize(value));
        await seeding.validCreate({ family: 'seed', pet: sent, wire: { method: 'POST', target: `${contract.basePath}/pets`, headers: [['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json']], body, transport: 'http' } });
      }
      for (const pet of model.all()) {
        const response = await wire.send({ method: 'GET', target: `${contract.basePath}/pets/${pet.id}`, headers: [['Authorization', `Bearer ${key}`]], transport: 'http' });
        snapshot.set(pet.id, response.body.toString('utf8'));
      }
      // Real cursors (one per filter, and unfiltered) for the valid paging cases.
      for (const status of [undefined, 'available', 'pending', 'sold']) {
        const target = `${contract.basePath}/pets?limit=1${status ? `&status=${status}` : ''}`;
        const response = await wire.send({ method: 'GET', target, headers: [['Authorization', `Bearer ${key}`]], transport: 'http' });
        const link = response.headers.link;
        const cursor = link ? new URL(link.slice(1, link.indexOf('>')), 'http://x').searchParams.get('cursor') : null;
        const first = (JSON.parse(response.body.toString('utf8')) as Pet[])[0];
        if (cursor && first) issued.push({ cursor, status, afterId: first.id });
      }
    }, 120_000);

    afterAll(async () => {
      console.log(`fuzz (${label}): ${tally.summary()}; seed ${seed}; ${((Date.now() - started) / 1000).toFixed(1)} s`);
      console.log(`fuzz (${label}) regression replays (not part of the figures above): ${regressionTally.summary()}`);
      wire?.close();
      await killAll();
      await store?.dispose();
    });

    it('listPets: every answer keeps the contract; valid queries get exactly the predicted page and Link chain', async () => {
      const ctx = { contract, op: ops.listPets, key, issued, authority: `${server.host}:${server.port}` };
      await fuzzOperation('listPets', validListCases(ctx), (c) => harness.validList(c), invalidListCases(ctx), (c) => harness.invalid(ops.listPets, c));
      expect(tally.requests('listPets')).toBeGreaterThanOrEqual(RUNS.valid + RUNS.invalid);
    });

    it('createPet: every answer keeps the contract; every valid NewPet is created and reads back byte for byte', async () => {
      const ctx = { contract, op: ops.createPet, key };
      await fuzzOperation('createPet', validCreateCases(ctx), (c) => harness.validCreate(c), invalidCreateCases(ctx), (c) => harness.invalid(ops.createPet, c));
      expect(tally.requests('createPet')).toBeGreaterThanOrEqual(RUNS.valid + RUNS.invalid);
    });

    it('getPet: every answer keeps the contract; stored ids answer their pet, others 404', async () => {
      const ctx = { contract, op: ops.getPet, key, knownIds: model.ids() };
      await fuzzOperation('getPet', validGetCases(ctx), (c) => harness.validGet(c), invalidGetCases(ctx), (c) => harness.invalid(ops.getPet, c));
      expect(tally.requests('getPet')).toBeGreaterThanOrEqual(RUNS.valid + RUNS.invalid);
    });

    it('every other operation of the contract: every answer keeps the contract, and the faults the spec defines (a query value its schema refuses, an undeclared media type, a stray body, a wrong method, a bad key, an Accept it cannot answer) get the refusal it defines; each is served a success too', async () => {
      // Those that take a body first (a photo stored), so the reads after them answer what they wrote: ranges, conditions, not only 404s.
      const others = Object.values(contract.operations)
        .filter((op) => !(op.operationId in ops))
        .sort((a, b) => Number(b.requestBody !== undefined) - Number(a.requestBody !== undefined));
      expect(others.map((op) => op.operationId).length, 'the contract has operations beyond the three modelled ones (the photos)').toBeGreaterThan(0);
      for (const op of others) {
        const cases = anyOperationCases({ contract, op, key, knownIds: model.ids() });
        await fuzzStreams([{ label: op.operationId, run: (l, numRuns) => runCases(l, cases, (c) => harness.invalid(op, c), { seed, numRuns }), numRuns: RUNS.other }]);
        expect(tally.requests(op.operationId)).toBeGreaterThanOrEqual(RUNS.other);
        const successes = [...tally.statuses(op.operationId)].filter(([status]) => status >= 200 && status < 300);
        expect(successes.length, `${op.operationId}: no 2xx among its answers (${tally.summary()})`).toBeGreaterThan(0);
      }
    });

    describe('defects the fuzzer found once, replayed (see support/fuzz/regressions.ts)', () => {
      // Counted apart (regressionTally), so the figures of the fuzzing itself stay what they are; the
      // model is shared, since a regression could create a pet.
      const replay = () => new Harness({ contract, checker, wire, model, tally: regressionTally, key, origin: new URL(server.base).origin, alive: () => server.proc.running(), output: () => server.proc.output() });
      for (const regression of REGRESSIONS) {
        it(`${regression.id}: ${regression.title}`, async () => {
          const broken: string[] = [];
          for (const repro of regression.reproductions(key, `${server.host}:${server.port}`)) {
            try {
              await replay().invalid(harness.op(repro.operationId), { family: regression.id, wire: repro.wire, expect: repro.expect });
            } catch (error) {
              broken.push(`${repro.wire.method} ${repro.wire.target}: ${(error as Error).message.split('\n').join(' ').slice(0, 400)}`);
            }
          }
          await harness.healthy();
          expect(broken).toEqual([]);
        });
      }
    });

    it('nothing stored earlier changed, and the store grew by exactly the 201s seen', async () => {
      await harness.healthy();
      // A pet a successful change or removal named is checked by the contract alone (model.touched).
      const { touched } = model;
      const stored = (await listAllPets(server.base, key)).filter((pet) => !touched.has(pet.id));
      for (const [id, before] of snapshot) {
        if (touched.has(id)) continue;
        const response = await wire.send({ method: 'GET', target: `${contract.basePath}/pets/${id}`, headers: [['Authorization', `Bearer ${key}`]], transport: 'http' });
        expect(response.body.toString('utf8'), `seeded pet ${id} changed`).toBe(before);
      }
      expect(stored).toEqual(model.all());
      expect(snapshot.size).toBe(SEED_PETS);
      expect(stored.length, 'pets in the store no change named = seeded + one per 201 seen, less those a change named').toBe(snapshot.size + tally.created + regressionTally.created - touched.size);
    });
  });
}

describe('property-based fuzzing from the spec', () => {
  afterAll(killAll);
  fuzzSuite('sqlite', async () => sqliteStore('fuzz'));
  if (postgresUrl) fuzzSuite('postgres', () => postgresStore(postgresUrl, 'fuzz'));
});
