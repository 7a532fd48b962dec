/**
 * The client package run in Node against the real server (issue 40): `npm run build:client`'s
 * tarball installed into an empty project outside this repository, and a script of that project
 * importing `@animal-store/client` run by the Node that runs this suite (`processes`, which CI
 * runs on Node 20 and on Node 24). It lists, creates with an Idempotency-Key, follows the next
 * page, and calls the deprecated getPet, reading the headers the package parses.
 * CONSUMER_NODE=<path to a node binary> runs the consumer with that Node instead, the server
 * staying on this one (e.g. Node 24 from .ci/install-node, without rebuilding better-sqlite3).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPets, startTestServer, type TestServer } from '../support/server.js';
import { consumerWithTarball, LIST_PETS_APP, type Consumer } from '../support/clientConsumer.js';

const run = promisify(execFile);
const consumerNode = process.env.CONSUMER_NODE || process.execPath;

/** The consumer's script: the shared app, plus a create, the next page and getPet; prints what it saw as JSON. */
const SCRIPT = `${LIST_PETS_APP}
import { createAnimalStoreClient as create } from '@animal-store/client';

const [baseUrl = '', apiKey = ''] = process.argv.slice(2);
const api = create({ baseUrl, apiKey });
const first = await listPets(baseUrl, apiKey);
const next = first.next ? await api.listPets({ params: { query: { limit: 2, cursor: first.next } } }) : undefined;
const created = await api.createPet({ body: { name: 'Miso', categoryId: 3 }, params: { header: { 'Idempotency-Key': 'consumer-1' } } });
const again = await api.createPet({ body: { name: 'Miso', categoryId: 3 }, params: { header: { 'Idempotency-Key': 'consumer-1' } } });
const fetched = created.data ? await api.getPet({ params: { path: { petId: created.data.id } } }) : undefined;
const denied = await create({ baseUrl, apiKey: 'ask_not-a-key' }).listPets();
console.log(JSON.stringify({
  node: process.version,
  first,
  next: next?.data?.map((pet) => pet.name),
  created: { status: created.response.status, location: created.headers.location, pet: created.data },
  replayed: again.headers.replayed === true && again.data?.id === created.data?.id,
  fetched: { name: fetched?.data?.name, sunsetIsDate: fetched?.data ? fetched.headers.sunset instanceof Date : false, sunset: fetched?.data ? fetched.headers.sunset.toISOString() : null },
  denied: { status: denied.response.status, code: denied.error?.code },
}));
`;

let consumer: Consumer;
let server: TestServer;

beforeAll(async () => {
  [consumer, server] = await Promise.all([consumerWithTarball('animal-store-node-consumer'), startTestServer('sqlite')]);
  await addPets(server, 3);
  const { code } = await transform(SCRIPT, { loader: 'ts', format: 'esm', target: 'node20' });
  writeFileSync(join(consumer.dir, 'app.mjs'), code);
}, 300_000);
afterAll(async () => {
  await server?.close();
  consumer?.remove();
});

describe(`the installed package in the consumer's Node (${consumerNode}), against the real server`, () => {
  it('lists and pages, creates once per Idempotency-Key, reads getPet with its Sunset as a Date, and types a 401 Error', async () => {
    const { stdout } = await run(consumerNode, ['app.mjs', server.api, server.key], { cwd: consumer.dir, encoding: 'utf8', timeout: 60_000 });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    console.log(`the consumer ran on Node ${String(seen.node)}`);
    expect(seen).toMatchObject({
      node: consumerNode === process.execPath ? process.version : expect.stringMatching(/^v\d+\./),
      first: { status: 200, names: ['Pet 0', 'Pet 1'], etag: expect.stringMatching(/^"/), next: expect.any(String) },
      next: ['Pet 2'],
      created: { status: 201, location: expect.stringMatching(/^\/v1\/pets\/\d+$/), pet: { name: 'Miso', categoryId: 3, status: 'available' } },
      replayed: true,
      fetched: { name: 'Miso', sunsetIsDate: true, sunset: '2030-12-05T00:00:00.000Z' },
      denied: { status: 401, code: 'unauthorized' },
    });
    expect(server.server.violations).toEqual([]);
  }, 90_000);
});
