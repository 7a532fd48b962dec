/**
 * `npm run mock` as a frontend developer uses it: the script in a child process on a free port,
 * answering on the real server's paths (/v1/...) with the contract's examples, asking for a bearer
 * token, open to cross-origin pages, serving the bytes of the example images, and stopping
 * Prism with it on SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from '../../client/index.js';
import { projectRoot } from '../../src/shared/paths.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { MOCK_BODY_DIFFERENCES, MOCK_DIFFERENCES } from '../../scripts/lib/prismContract.js';
import { freePort, isListening, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { PROFILES } from '../contract/targets.js';
import { at } from '../support/json.js';

const HOST = '127.0.0.1';
const AUTH = { Authorization: 'Bearer any-token-will-do' };

const spec = loadBundledSpec();
const listPetsFirstPage = at(spec, 'paths', '/pets', 'get', 'responses', '200', 'content', 'application/json', 'examples', 'firstPage', 'value');
const getPetFound = at(spec, 'paths', '/pets/{petId}', 'get', 'responses', '200', 'content', 'application/json', 'examples', 'found', 'value');
const unauthorizedExample = at(spec, 'components', 'responses', 'Unauthorized', 'content', 'application/json', 'examples', 'unauthorized', 'value');

describe('npm run mock (Prism on the contract, on the real server paths)', () => {
  let mock: RunningProcess;
  let port: number;
  let base: string;

  beforeAll(async () => {
    port = await freePort(HOST);
    base = `http://${HOST}:${port}/v1`;
    mock = startProcess(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/mock.ts', '--port', String(port)], { cwd: projectRoot });
    await waitForHttp(`${base}/pets`, mock);
  });

  afterAll(async () => {
    if (mock) await stopProcess(mock);
  });

  it('the examples the checks compare with exist in the contract', () => {
    expect(Array.isArray(listPetsFirstPage) && listPetsFirstPage.length > 0).toBe(true);
    expect(getPetFound).toMatchObject({ id: 1 });
    expect(unauthorizedExample).toMatchObject({ status: 401 });
  });

  it('the typed client works against the mock by base URL alone, as against the real server', async () => {
    const api = createAnimalStoreClient({ baseUrl: base, apiKey: 'any-token-will-do' });
    const list = await api.GET('/pets', { params: { query: { limit: 2 } } });
    expect(list.response.status).toBe(200);
    expect(list.data).toEqual(listPetsFirstPage);
    const one = await api.GET('/pets/{petId}', { params: { path: { petId: 1 } } });
    expect(one.data).toEqual(getPetFound);
    const created = await api.POST('/pets', { body: { name: 'Biscuit', categoryId: 2 } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ id: expect.any(Number), name: expect.any(String) });
  });

  it('accepts a photo (raw PNG, JPEG, WebP; a form with a photo file) and answers the example image of each media type, byte for byte', async () => {
    for (const [type, file] of [['image/png', 'biscuit.png'], ['image/jpeg', 'biscuit.jpg'], ['image/webp', 'biscuit.webp']] as const) {
      const image = readFileSync(join(projectRoot, 'spec', 'examples', file));
      const stored = await fetch(`${base}/pets/1/photo`, { method: 'PUT', headers: { ...AUTH, 'Content-Type': type }, body: new Uint8Array(image) });
      expect(stored.status, type).toBe(204);
      const answer = await fetch(`${base}/pets/1/photo`, { headers: { ...AUTH, Accept: type } });
      expect(answer.status, type).toBe(200);
      expect(answer.headers.get('content-type'), type).toBe(type);
      expect(Buffer.from(await answer.arrayBuffer()).equals(image), type).toBe(true);
      expect(answer.headers.get('content-length'), type).toBe(String(image.length));
    }
    const form = new FormData();
    form.append('name', 'Biscuit');
    form.append('categoryId', '2');
    form.append('photo', new Blob([new Uint8Array(readFileSync(join(projectRoot, 'spec', 'examples', 'biscuit.png')))], { type: 'image/png' }), 'biscuit.png');
    const created = await fetch(`${base}/pets`, { method: 'POST', headers: AUTH, body: form });
    expect(created.status).toBe(201);
  });

  it('GET /v1/pets with a bearer token answers 200 with the listPets example firstPage', async () => {
    const response = await fetch(`${base}/pets`, { headers: AUTH });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(listPetsFirstPage);
  });

  it('GET /v1/pets without a bearer token answers 401 with an Error body', async () => {
    const response = await fetch(`${base}/pets`);
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.code).toBe('unauthorized');
    expect(typeof body.message === 'string' && body.message.length > 0).toBe(true);
    expect(body.status).toBe(401);
    expect(body).toEqual(unauthorizedExample);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('GET /v1/pets/1 with a bearer token answers 200 with a Pet', async () => {
    const response = await fetch(`${base}/pets/1`, { headers: AUTH });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual(getPetFound);
    expect(body).toMatchObject({ id: 1, name: expect.any(String), categoryId: expect.any(Number), status: expect.stringMatching(/^(available|pending|sold)$/) });
  });

  it('does not serve the paths without the base path (/pets), as the real server does not', async () => {
    const response = await fetch(`http://${HOST}:${port}/pets`, { headers: AUTH });
    expect(response.status).toBe(404);
  });

  it('allows a CORS preflight from another origin that sends Authorization', async () => {
    const origin = 'http://localhost:5173';
    const preflight = await fetch(`${base}/pets`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(200);
    expect(preflight.status).toBeLessThan(300);
    expect([origin, '*']).toContain(preflight.headers.get('access-control-allow-origin'));
    const allowedHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(allowedHeaders.includes('authorization') || allowedHeaders.includes('*')).toBe(true);
    expect((preflight.headers.get('access-control-allow-methods') ?? '').toUpperCase()).toMatch(/\bGET\b|\*/);

    // The request that follows: the browser lets the page read it, and its Link header.
    const actual = await fetch(`${base}/pets`, { headers: { ...AUTH, Origin: origin } });
    expect(actual.status).toBe(200);
    expect([origin, '*']).toContain(actual.headers.get('access-control-allow-origin'));
    const exposed = (actual.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed.includes('link') || exposed.includes('*')).toBe(true);
  });

  it('stops on SIGTERM with exit code 0, and Prism stops with it', async () => {
    const exit = await stopProcess(mock, 'SIGTERM');
    expect(exit, mock.output()).toEqual({ code: 0, signal: null });
    expect(await isListening(HOST, port)).toBe(false);
  });
});

describe('the mock\'s differences: one list, printed by --help and asserted by the contract suite', () => {
  const ids = Object.keys(MOCK_DIFFERENCES).sort();

  it('npm run mock -- --help lists exactly the differences of scripts/lib/prismContract.ts, one line each: the contract\'s, then those of bodies beyond JSON', () => {
    const help = execFileSync(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/mock.ts', '--help'], { cwd: projectRoot, encoding: 'utf8' });
    const section = help.slice(help.indexOf('What the mock does differently'), help.indexOf('Stop it with Ctrl-C.'));
    const listed = section.split('\n').filter((line) => line.startsWith('- ')).map((line) => line.slice(2));
    expect(listed).toEqual([...Object.values(MOCK_DIFFERENCES), ...Object.values(MOCK_BODY_DIFFERENCES)]);
  });

  it('the contract suite runs the mock target with exactly those differences', () => {
    expect([...PROFILES.mock.knownDifferences].sort()).toEqual(ids);
  });

  it('each difference is the one a check of the contract suite names, so each is asserted on the mock', () => {
    // The suite also fails, on the mock target, for a known difference no check names.
    const suite = readFileSync(join(projectRoot, 'test', 'contract', 'suite.ts'), 'utf8');
    const named = new Set([...suite.matchAll(/difference: '([a-z0-9-]+)'/g)].map((m) => m[1]));
    expect([...named].filter((id) => id?.startsWith('prism-')).sort()).toEqual(ids);
  });

  it('each difference on bodies beyond JSON is the one a check of test/loop/spec-loop.test.ts names, so each is asserted on a mock of operations that have them', () => {
    const loop = readFileSync(join(projectRoot, 'test', 'loop', 'spec-loop.test.ts'), 'utf8');
    const named = new Set([...loop.matchAll(/bodyDifference: '([a-z0-9-]+)'/g)].map((m) => m[1]));
    expect([...named].sort()).toEqual(Object.keys(MOCK_BODY_DIFFERENCES).sort());
  });
});

