/**
 * An independent validator: the contract suite's traffic (test/contract/suite.ts) runs through
 * `prism proxy --errors` in front of the real server (SQLite), and the run fails on any contract
 * violation Prism reports. First it proves that Prism, on this very pipeline, does flag a bad
 * request and a bad response, so it cannot pass by checking nothing.
 *
 *   test -> prism proxy --errors ----------------\
 *        \-> prism proxy (replays of requests     >-> relay (can answer with a lie) -> server
 *            strict Prism refused to forward) ---/
 *
 * The server is the one `npm start` ships (the bundle, test/robust/support/server.ts), with
 * NODE_ENV=test so it also checks its own responses: a response it flags is logged as "response
 * breaks the contract", and the check that caused it fails.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineContractSuite } from '../contract/suite.js';
import type { KnownDifference } from '../contract/target.js';
import { killAll, sqliteStore, startServerProcess, type ServerProcess, type Store } from './support/server.js';
import { startPrismProxy, writeProxySpec, type PrismProxy, type ProxySpec } from './support/prismProxy.js';
import { createPrismValidator, type PrismValidator } from './support/prismValidator.js';
import { startTamperableUpstream, type TamperableUpstream } from './support/tamperableUpstream.js';

/** The bundled server as a child process, with the key its first start created. */
interface RunningServer {
  process: ServerProcess;
  origin: string;
  /** `/v1` */
  basePath: string;
  key: string;
}

let store: Store | undefined;
let server: RunningServer | undefined;
/** How much of the server's output the last check of its own violations has read. */
let outputRead = 0;
let upstream: TamperableUpstream | undefined;
let spec: ProxySpec | undefined;
let strict: PrismProxy | undefined;
let lenient: PrismProxy | undefined;
let validator: PrismValidator | undefined;

function running(): { server: RunningServer; upstream: TamperableUpstream; strict: PrismProxy; validator: PrismValidator } {
  if (!server || !upstream || !strict || !validator) throw new Error('the proxy pipeline did not start');
  return { server, upstream, strict, validator };
}

beforeAll(async () => {
  const began = Date.now();
  store = sqliteStore('prism-proxy');
  const child = await startServerProcess(store, { NODE_ENV: 'test' });
  if (!child.bootstrapKey) throw new Error(`the first start on an empty store shows no key:\n${child.proc.output()}`);
  const base = new URL(child.base);
  server = { process: child, origin: base.origin, basePath: base.pathname, key: child.bootstrapKey };
  upstream = await startTamperableUpstream(server.origin);
  spec = writeProxySpec();
  [strict, lenient] = await Promise.all([startPrismProxy(spec.path, upstream.origin, { errors: true }), startPrismProxy(spec.path, upstream.origin, { errors: false })]);
  validator = createPrismValidator({ strict: strict.origin, lenient: lenient.origin, direct: server.origin });
  console.info(`prism proxy: pipeline ready in ${Date.now() - began} ms (strict ${strict.origin}, lenient ${lenient.origin}, server ${server.process.base})`);
});

afterAll(async () => {
  await Promise.all([strict?.stop(), lenient?.stop()]);
  await upstream?.close();
  await killAll();
  await store?.dispose();
  spec?.dispose();
});

afterEach(() => {
  // The server logs each response of its own that breaks the contract (src/http/responseChecker.ts).
  const output = server?.process.proc.output() ?? '';
  const flagged = output.slice(outputRead).split('\n').filter((line) => line.includes('response breaks the contract'));
  outputRead = output.length;
  expect(flagged, 'responses the server itself flagged').toEqual([]);
});

describe('sanity: Prism on this pipeline does report violations', () => {
  it('refuses a request that breaks the contract: 422 problem+json naming the parameter', async () => {
    const { server, strict } = running();
    const response = await fetch(`${strict.origin}/v1/pets?limit=0`, { headers: { Authorization: `Bearer ${server.key}` } });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await response.json()) as { validation?: Array<{ location: string[] }> };
    expect(body.validation?.map((v) => v.location.join('.'))).toEqual(['query.limit']);
  });

  it('reports a response that breaks the contract (500 VIOLATIONS + sl-violations), and the validator records it', async () => {
    const { server, upstream, strict, validator } = running();
    upstream.answerNextWith({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"one","name":"Liar"}' });
    const response = await validator.fetch(`${strict.origin}/v1/pets/1`, { headers: { Authorization: `Bearer ${server.key}` } });
    expect(upstream.pending()).toBe(false);
    expect(response.status).toBe(500);
    expect(response.headers.get('sl-violations')).toContain('"response"');
    const recorded = validator.violations.splice(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.reason).toMatch(/response breaks the contract/);
  });

  it('reports a response header that breaks its declared schema (Location without /v1)', async () => {
    const { server, upstream, strict, validator } = running();
    const pet = '{"id":1,"name":"Rex","categoryId":3,"status":"available"}';
    upstream.answerNextWith({ status: 201, headers: { 'content-type': 'application/json', location: '/pets/1' }, body: pet });
    const response = await validator.fetch(`${strict.origin}/v1/pets`, { method: 'POST', headers: { Authorization: `Bearer ${server.key}`, 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":3}' });
    expect(response.status).toBe(500);
    const recorded = validator.violations.splice(0);
    expect(JSON.stringify(recorded)).toMatch(/location/i);
    expect(recorded).toHaveLength(1);
  });

  it('records a server that accepts a request Prism rejects', async () => {
    const { server, upstream, strict, validator } = running();
    // A 200 that is itself valid (listPets' 200 requires an ETag), so the request is the only fault.
    upstream.answerNextWith({ status: 200, headers: { 'content-type': 'application/json', etag: '"AAAAAAAAAAAAAAAAAAAAAA"' }, body: '[]' });
    const response = await validator.fetch(`${strict.origin}/v1/pets?status=lost`, { headers: { Authorization: `Bearer ${server.key}` } });
    expect(response.status).toBe(200);
    const recorded = validator.violations.splice(0);
    expect(recorded.map((v) => v.reason)).toEqual(['the server answered 200 to a request Prism rejects']);
  });

  it('passes a conforming exchange without a violation', async () => {
    const { server, strict, validator } = running();
    const response = await validator.fetch(`${strict.origin}/v1/pets`, { headers: { Authorization: `Bearer ${server.key}` } });
    expect(response.status).toBe(200);
    expect(validator.violations).toEqual([]);
    // The sanity requests are not part of the figures printed for the suite.
    Object.assign(validator.figures, { checked: 0, replayed: 0, direct: 0, limitations: [] });
  });
});

defineContractSuite({ name: 'prism-proxy', capabilities: { stateful: true }, knownDifferences: new Set<KnownDifference>() }, () => {
  const { server, strict, validator } = running();
  return { baseUrl: `${strict.origin}${server.basePath}`, key: server.key, fetch: validator.fetch };
});

describe('prism proxy verdict', () => {
  it('Prism reports no contract violation for the whole suite', () => {
    const { validator } = running();
    const { checked, replayed, direct, limitations } = validator.figures;
    console.log(`prism proxy: ${checked} requests checked, ${validator.violations.length} violations`);
    console.log(`  (${replayed} of them refused by prism --errors as contract-breaking and replayed through the lenient proxy; ${direct} malformed-JSON requests sent straight to the server, which Prism cannot carry)`);
    for (const limitation of limitations) console.log(`  known Prism limitation: ${limitation}`);
    expect(checked).toBeGreaterThan(50);
    expect(validator.violations).toEqual([]);
  });
});
