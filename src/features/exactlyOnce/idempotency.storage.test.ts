/**
 * createPet with `Idempotency-Key` (spec: parameter IdempotencyKey, info "Creating exactly
 * once"): a retry with the same key and body from the same caller replays the first 201 and adds
 * nothing; another body is a 422; a request while the first is in flight is a 409; keys are kept
 * per caller, survive a restart, and are purged after the retention. On every storage target,
 * with every response checked against the contract.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.js';
import { startServer, type RunningServer } from '../../server.js';
import { createApiKeyStore } from '../../store/apiKeys.js';
import { KEY_RETENTION_MS, purgeIdempotencyKeys } from './purge.js';
import type { Tables as RecordTables } from './records.js';
import { createSandboxStore } from '../sandbox/store.js';
import { countPets, describeEachTarget, listAllPets, openTestStorage, targets, testConfig, type StorageHandle, type TestServer } from '../../../test/support/server.js';

type Pet = { id: number; name: string; categoryId: number; status: string };

interface Reply {
  status: number;
  text: string;
  location: string | null;
  replayed: string | null;
  retryAfter: string | null;
}

/** What posting needs of a server: its API and a key. */
type Api = Pick<TestServer, 'request' | 'key'>;

/** POST /pets with a raw JSON body and, unless undefined, an Idempotency-Key. */
async function postPet(t: Api, body: string, key: string | undefined, apiKey = t.key): Promise<Reply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const response = await t.request('/pets', { method: 'POST', body, headers });
  return {
    status: response.status,
    text: await response.text(),
    location: response.headers.get('location'),
    replayed: response.headers.get('idempotent-replayed'),
    retryAfter: response.headers.get('retry-after'),
  };
}

const uniqueKey = () => `"${randomUUID()}"`;

describeEachTarget('createPet with Idempotency-Key', (t) => {
  it('a retry with the same key and body replays the first 201 (same id, body, Location) and adds nothing', async () => {
    const key = uniqueKey();
    const body = JSON.stringify({ name: 'Replay', categoryId: 2, status: 'pending' });
    const first = await postPet(t(), body, key);
    expect(first.status, first.text).toBe(201);
    expect(first.replayed, 'a first create is not a replay').toBeNull();
    const pet = JSON.parse(first.text) as Pet;
    expect(first.location).toBe(`/v1/pets/${pet.id}`);
    const before = await countPets(t());
    for (let i = 0; i < 3; i++) {
      const again = await postPet(t(), body, key);
      expect(again.status, again.text).toBe(201);
      expect(again.text, 'the replayed body, byte for byte').toBe(first.text);
      expect(again.location).toBe(first.location);
      expect(again.replayed).toBe('true');
    }
    expect(await countPets(t())).toBe(before);
  });

  it('bodies are compared by value after the default: status omitted equals status available, key order and whitespace aside', async () => {
    const key = uniqueKey();
    const first = await postPet(t(), '{"name":"Default","categoryId":3}', key);
    expect(first.status, first.text).toBe(201);
    const explicit = await postPet(t(), '{ "status": "available",\n  "categoryId": 3, "name": "Default" }', key);
    expect(explicit.status, explicit.text).toBe(201);
    expect(explicit.replayed).toBe('true');
    expect(explicit.text).toBe(first.text);
  });

  it('the same key with a different body is a 422 idempotency_key_reused; nothing is stored, and the key still replays its first body', async () => {
    const key = uniqueKey();
    const body = JSON.stringify({ name: 'Original', categoryId: 4 });
    const first = await postPet(t(), body, key);
    expect(first.status, first.text).toBe(201);
    const before = await countPets(t());
    for (const other of [{ name: 'Other', categoryId: 4 }, { name: 'Original', categoryId: 5 }, { name: 'Original', categoryId: 4, status: 'sold' }]) {
      const reused = await postPet(t(), JSON.stringify(other), key);
      expect(reused.status, reused.text).toBe(422);
      expect(JSON.parse(reused.text)).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
      expect(reused.replayed).toBeNull();
    }
    expect(await countPets(t())).toBe(before);
    const again = await postPet(t(), body, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
  });

  it('concurrent requests with one key: exactly one creates, the others get a 409 with Retry-After or the replay; one pet stored', async () => {
    const key = uniqueKey();
    const name = `Concurrent ${key}`;
    const body = JSON.stringify({ name, categoryId: 1 });
    const before = await countPets(t());
    const replies = await Promise.all(Array.from({ length: 20 }, () => postPet(t(), body, key)));
    const created = replies.filter((r) => r.status === 201 && r.replayed === null);
    const replayed = replies.filter((r) => r.status === 201 && r.replayed === 'true');
    const inUse = replies.filter((r) => r.status === 409);
    expect(replies.filter((r) => r.status !== 201 && r.status !== 409).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    expect(created).toHaveLength(1);
    const [first] = created as [Reply];
    for (const r of replayed) expect(r.text).toBe(first.text);
    for (const r of inUse) {
      expect(r.retryAfter).toBe('1');
      expect(JSON.parse(r.text)).toMatchObject({ code: 'idempotency_key_in_use', status: 409 });
    }
    expect(await countPets(t())).toBe(before + 1);
    expect((await listAllPets(t())).filter((p) => p.name === name)).toHaveLength(1);
    // Once the first has finished, every retry is the replay.
    const after = await postPet(t(), body, key);
    expect(after.status).toBe(201);
    expect(after.replayed).toBe('true');
    expect(after.text).toBe(first.text);
  });

  it('keys belong to the API key that sent them: two callers with the same key add two pets', async () => {
    const { key: otherApiKey } = await t().server.keys.create('idempotency other caller');
    // Twice: a refresh joins a reload already under way, which may have read the keys before this one.
    await t().server.keyCache.refresh();
    await t().server.keyCache.refresh();
    const key = uniqueKey();
    const body = JSON.stringify({ name: 'Per caller', categoryId: 6 });
    const mine = await postPet(t(), body, key);
    const theirs = await postPet(t(), body, key, otherApiKey);
    expect(mine.status, mine.text).toBe(201);
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.replayed, 'another caller with the same key is not a replay').toBeNull();
    expect((JSON.parse(theirs.text) as Pet).id).not.toBe((JSON.parse(mine.text) as Pet).id);
    expect((await postPet(t(), body, key, otherApiKey)).text).toBe(theirs.text);
    expect((await postPet(t(), body, key)).text).toBe(mine.text);
    // A different body under the other caller's key is judged against the other caller's record alone.
    expect((await postPet(t(), JSON.stringify({ name: 'Per caller', categoryId: 7 }), key, otherApiKey)).status).toBe(422);
  });

  it('without the header every request adds a pet, as before', async () => {
    const body = JSON.stringify({ name: 'No key', categoryId: 8 });
    const before = await countPets(t());
    const one = await postPet(t(), body, undefined);
    const two = await postPet(t(), body, undefined);
    expect([one.status, two.status]).toEqual([201, 201]);
    expect([one.replayed, two.replayed]).toEqual([null, null]);
    expect((JSON.parse(one.text) as Pet).id).not.toBe((JSON.parse(two.text) as Pet).id);
    expect(await countPets(t())).toBe(before + 2);
  });

  const invalid: Array<[string, string]> = [
    ['empty', ''],
    ['over 255 characters', 'k'.repeat(256)],
    ['a tab (a control character)', 'a\tb'],
    ['a space', 'a b'],
    ['a character beyond ASCII', 'clé'],
  ];
  it.each(invalid)('an Idempotency-Key that is %s is a 400 naming the header; nothing is stored', async (_what, value) => {
    const before = await countPets(t());
    const reply = await postPet(t(), JSON.stringify({ name: 'Bad key', categoryId: 1 }), value);
    expect(reply.status, reply.text).toBe(400);
    const error = JSON.parse(reply.text) as { code: string; details?: Array<{ in: string; field: string }> };
    expect(error.code).toBe('validation_failed');
    expect(error.details?.some((d) => d.in === 'header' && d.field.toLowerCase() === 'idempotency-key'), reply.text).toBe(true);
    expect(await countPets(t())).toBe(before);
  });

  it('a key of exactly 255 visible characters, quoted or not, is accepted', async () => {
    for (const key of [`"${randomUUID()}${'k'.repeat(217)}"`, `~${randomUUID()}`.padEnd(255, '~'), '!']) {
      const reply = await postPet(t(), JSON.stringify({ name: `Key of ${key.length}`, categoryId: 1 }), key);
      expect(reply.status, reply.text).toBe(201);
    }
  });
});

/** A restart and the purge need the store beyond one server's life, so each target gets its own here. */
describe.each(targets)('Idempotency-Key records outlive the server and are purged after the retention [%s]', (target) => {
  let storage: StorageHandle;
  let server: RunningServer | undefined;
  let apiKey = '';

  /** A server on the kept store: a restart is a stop and another start (new process state, same database). */
  const start = async (): Promise<Api> => {
    const config = testConfig();
    server = await startServer({ config, logger: createLogger(config.logLevel), database: storage.database, bootstrapKey: false });
    await server.keyCache.refresh();
    const api = `${server.origin}${server.basePath}`;
    return { key: apiKey, request: (path, init = {}) => fetch(`${api}${path}`, init) };
  };
  const stop = async () => {
    const violations = server?.violations.splice(0) ?? [];
    await server?.close();
    server = undefined;
    expect(violations, 'responses that broke the contract').toEqual([]);
  };

  beforeAll(async () => {
    storage = await openTestStorage(target);
    apiKey = (await createApiKeyStore(storage.database.db).create('idempotency')).key;
  });
  afterAll(async () => {
    await server?.close();
    await storage.dispose();
  });

  it('a restart keeps the record: the retry after it replays the first 201', async () => {
    const key = uniqueKey();
    const body = JSON.stringify({ name: 'Across a restart', categoryId: 9 });
    const first = await postPet(await start(), body, key);
    expect(first.status, first.text).toBe(201);
    await stop();
    const again = await postPet(await start(), body, key);
    expect(again.status, again.text).toBe(201);
    expect(again.replayed).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.location).toBe(first.location);
    await stop();
  });

  it('the purge deletes records older than the retention and keeps newer ones; a purged key creates anew', async () => {
    const t = await start();
    const db = storage.database.db.withTables<RecordTables>();
    const oldKey = uniqueKey();
    const newKey = uniqueKey();
    const body = JSON.stringify({ name: 'Purge me', categoryId: 10 });
    const old = await postPet(t, body, oldKey);
    const recent = await postPet(t, body, newKey);
    expect([old.status, recent.status]).toEqual([201, 201]);
    // Age the first record past the retention, as if it had been written 24 h and a minute ago.
    const aged = new Date(Date.now() - KEY_RETENTION_MS - 60_000).toISOString();
    await db.updateTable('idempotency_records').set({ created_at: aged }).where('idempotency_key', '=', oldKey).execute();

    const purged = await purgeIdempotencyKeys(storage.database.db, new Date(Date.now() - KEY_RETENTION_MS));
    expect(purged).toBe(1);
    const left = await db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', 'in', [oldKey, newKey]).execute();
    expect(left.map((r) => r.idempotency_key)).toEqual([newKey]);

    const recentAgain = await postPet(t, body, newKey);
    expect(recentAgain.replayed).toBe('true');
    expect(recentAgain.text).toBe(recent.text);
    const oldAgain = await postPet(t, body, oldKey);
    expect(oldAgain.status).toBe(201);
    expect(oldAgain.replayed, 'a purged key is new again').toBeNull();
    expect((JSON.parse(oldAgain.text) as Pet).id).not.toBe((JSON.parse(old.text) as Pet).id);
    await stop();
  });

  it('the purge works in chunks through a backlog larger than one chunk', async () => {
    const db = storage.database.db.withTables<RecordTables>();
    const aged = new Date(Date.now() - KEY_RETENTION_MS - 60_000).toISOString();
    const rows = Array.from({ length: 1_234 }, (_, i) => ({ caller: 'backlog', operation_id: 'createPet', idempotency_key: `k${i}`, fingerprint: 'f', status: 201, headers: '{}', media_type: null, body: null, created_at: aged }));
    for (let i = 0; i < rows.length; i += 200) await db.insertInto('idempotency_records').values(rows.slice(i, i + 200)).execute();
    expect(await purgeIdempotencyKeys(storage.database.db, new Date(Date.now() - KEY_RETENTION_MS))).toBe(1_234);
    const left = await db.selectFrom('idempotency_records').select('idempotency_key').where('caller', '=', 'backlog').execute();
    expect(left).toEqual([]);
  });
});

describe('the sandbox reset forgets every Idempotency-Key record', () => {
  it('a key used before a reset creates anew after it', async () => {
    const storage = await openTestStorage('sqlite');
    try {
      const db = storage.database.db.withTables<RecordTables>();
      await db.insertInto('idempotency_records').values({ caller: 'sandbox', operation_id: 'createPet', idempotency_key: 'before-reset', fingerprint: 'f', status: 201, headers: '{}', media_type: null, body: null, created_at: new Date().toISOString() }).execute();
      const sandbox = createSandboxStore(storage.database, { pets: [{ id: 1, name: 'Seed', categoryId: 1, status: 'available' }], created: [] });
      expect(await sandbox.reset()).toBe(1);
      expect(await db.selectFrom('idempotency_records').selectAll().execute()).toEqual([]);
    } finally {
      await storage.dispose();
    }
  });
});
