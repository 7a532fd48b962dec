/**
 * `npm run sandbox` as a frontend developer runs it: the real command in a child process on a free
 * port; the real server's code on a throwaway store seeded from the contract's examples, its one
 * documented key accepted (any other, or none: the real 401), a reset that restores the seeds, and no way to start it in
 * production or on a real database. SIGTERM stops it with exit code 0 and deletes its store.
 */
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/shared/paths.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { freePort, isListening, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { at } from '../support/json.js';

const HOST = '127.0.0.1';
const AUTH = { Authorization: 'Bearer sandbox' };

type Pet = { id: number; name: string; categoryId: number; status: string };

// What the seeds must be, read from the contract here independently of the sandbox's own reading.
const spec = loadBundledSpec();
const listExamples = Object.values(at(spec, 'paths', '/pets', 'get', 'responses', '200', 'content', 'application/json', 'examples') as Record<string, { value: Pet[] }>);
const examplePets = [...new Map(listExamples.flatMap((e) => e.value).map((p) => [p.id, p])).values()].sort((a, b) => a.id - b.id);
const createExamples = Object.values(at(spec, 'paths', '/pets', 'post', 'requestBody', 'content', 'application/json', 'examples') as Record<string, { value: Partial<Pet> }>).map((e) => ({ status: 'available', ...e.value }));
/** The id the first create after the seeds gets: ids continue after the largest seeded one. */
const nextId = Math.max(...examplePets.map((p) => p.id)) + 1;

/** Runs `npm run sandbox` with `args` and `env` added to this environment. */
function runSandbox(args: string[], env: Record<string, string | undefined> = {}): RunningProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: undefined, DATABASE_URL: undefined, LOG_LEVEL: undefined, ...env };
  for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key];
  return startProcess('npm', ['run', '-s', 'sandbox', '--', ...args], { cwd: projectRoot, env: childEnv });
}

describe('npm run sandbox (the real server on a throwaway store)', () => {
  let sandbox: RunningProcess;
  let origin: string;
  let base: string;

  const get = (path: string, headers: Record<string, string> = AUTH) => fetch(`${base}${path}`, { headers });
  const create = async (body: Record<string, unknown>): Promise<Pet> => {
    const response = await fetch(`${base}/pets`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status, await response.clone().text()).toBe(201);
    return (await response.json()) as Pet;
  };
  const list = async (): Promise<Pet[]> => (await (await get('/pets?limit=100')).json()) as Pet[];

  beforeAll(async () => {
    const port = await freePort(HOST);
    origin = `http://${HOST}:${port}`;
    base = `${origin}/v1`;
    // NODE_ENV=test (vitest's) would be refused by nothing, but a sandbox does not read it: run it as a developer does.
    sandbox = runSandbox(['--port', String(port)]);
    await waitForHttp(`${base}/pets`, sandbox);
  });

  afterAll(async () => {
    if (sandbox?.running()) await stopProcess(sandbox, 'SIGKILL');
  });

  it('the examples the checks compare with exist in the contract', () => {
    expect(examplePets.length).toBeGreaterThan(0);
    expect(createExamples.length).toBeGreaterThan(0);
  });

  it('the banner says SANDBOX, and where its throwaway store is', () => {
    expect(sandbox.output()).toMatch(/^SANDBOX: /m);
    expect(sandbox.output()).toMatch(/data: +\S+animal-store-sandbox-\S+\/sandbox\.sqlite \(deleted on exit\)/);
  });

  it('is seeded with the pets of the contract\'s examples (listPets with their ids; createPet\'s request examples among them)', async () => {
    const pets = await list();
    expect(pets).toEqual(examplePets);
    for (const example of createExamples) expect(pets, JSON.stringify(example)).toContainEqual({ ...example, id: expect.any(Number) });
  });

  it('accepts its one documented key, "Bearer sandbox", the scheme in any case; any other token is the real 401 invalid_token', async () => {
    for (const authorization of ['Bearer sandbox', 'bearer sandbox', 'BEARER sandbox']) {
      const response = await get('/pets', { Authorization: authorization });
      expect(response.status, authorization).toBe(200);
    }
    for (const authorization of ['Bearer nope', 'Bearer Sandbox', `Bearer ask_${'A'.repeat(43)}`]) {
      const response = await get('/pets', { Authorization: authorization });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate'), authorization).toBe('Bearer realm="animal-store", error="invalid_token"');
    }
  });

  it('answers the real 401 without a token, or with a malformed Authorization header', async () => {
    const malformed: Array<Record<string, string>> = [{}, { Authorization: 'Basic dXNlcjpwYXNz' }, { Authorization: 'Bearer' }, { Authorization: 'Bearer a b' }];
    for (const headers of malformed) {
      const response = await get('/pets', headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"/);
      expect(await response.json()).toMatchObject({ code: 'unauthorized', status: 401 });
    }
  });

  it('marks every response X-Sandbox: true (API, errors, probes, docs routes)', async () => {
    for (const [path, headers] of [['/v1/pets', AUTH], ['/v1/pets', {}], ['/v1/pets/987654', AUTH], ['/v1/nowhere', AUTH], ['/healthz', {}], ['/openapi.json', {}]] as const) {
      const response = await fetch(`${origin}${path}`, { headers });
      expect(response.headers.get('x-sandbox'), path).toBe('true');
    }
  });

  it('stores what it is sent: create, then get and list return it; real 404s, 400 details and paging', async () => {
    const pet = await create({ name: 'Sandbox Rex', categoryId: 3, status: 'pending' });
    expect(pet).toEqual({ id: nextId, name: 'Sandbox Rex', categoryId: 3, status: 'pending' });
    expect(await (await get(`/pets/${pet.id}`)).json()).toEqual(pet);
    expect(await list()).toContainEqual(pet);

    const missing = await get('/pets/987654321');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found' });
    const invalid = await get('/pets?limit=0');
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ details: [expect.objectContaining({ in: 'query', field: 'limit' })] });

    const first = await get('/pets?limit=1');
    const next = first.headers.get('link');
    expect(next).toMatch(/^<\/v1\/pets\?limit=1&cursor=[^>]+>; rel="next"$/);
    const second = await fetch(`${origin}${next?.slice(1, next.indexOf('>'))}`, { headers: AUTH });
    expect(((await second.json()) as Pet[])[0]?.id).toBe(examplePets[1]?.id ?? pet.id);
  });

  it('is open to every origin (CORS_ORIGINS=*)', async () => {
    const response = await get('/pets', { ...AUTH, Origin: 'http://localhost:5173' });
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('POST /__sandbox/reset restores the seeds, and ids start again after them', async () => {
    await create({ name: 'Gone after reset', categoryId: 1 });
    expect((await list()).length).toBeGreaterThan(examplePets.length);

    const reset = await fetch(`${origin}/__sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.headers.get('x-sandbox')).toBe('true');
    expect(reset.headers.get('access-control-allow-origin')).toBe('*');
    expect(await reset.json()).toEqual({ reset: true, pets: examplePets.length });
    expect(await list()).toEqual(examplePets);
    expect((await create({ name: 'After reset', categoryId: 2 })).id).toBe(nextId);

    const wrongMethod = await fetch(`${origin}/__sandbox/reset`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('binds 127.0.0.1 by default: not reachable on this machine\'s other addresses', async () => {
    const port = Number(new URL(origin).port);
    const others = Object.values(networkInterfaces()).flatMap((list) => list ?? []).filter((a) => a.family === 'IPv4' && !a.internal);
    for (const address of others) expect(await isListening(address.address, port), address.address).toBe(false);
  });

  it('SIGTERM stops it with exit code 0 and deletes its store', async () => {
    const data = /data: +(\S+\/sandbox\.sqlite)/.exec(sandbox.output())?.[1];
    expect(data && existsSync(data)).toBe(true);
    const exit = await stopProcess(sandbox);
    expect(exit, sandbox.output()).toEqual({ code: 0, signal: null });
    expect(existsSync(data ?? '')).toBe(false);
    expect(existsSync(data?.replace(/\/sandbox\.sqlite$/, '') ?? '')).toBe(false);
  });
});

describe('npm run sandbox refuses to start where it does not belong', () => {
  it.each([
    ['NODE_ENV=production', { NODE_ENV: 'production' }, /Refusing to start the sandbox: NODE_ENV=production/],
    ['DATABASE_URL set', { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/prod' }, /Refusing to start the sandbox: DATABASE_URL is set/],
  ] as const)('%s: exit code 2, a message, nothing listening', async (_case, env, message) => {
    const port = await freePort(HOST);
    const refused = runSandbox(['--port', String(port)], env);
    const exit = await refused.exited;
    expect(exit.code, refused.output()).toBe(2);
    expect(refused.output()).toMatch(message);
    expect(refused.output()).not.toMatch(/^SANDBOX: /m);
    expect(await isListening(HOST, port)).toBe(false);
  });

  it('--help says how it is marked, how to reset, and what tokens it accepts', async () => {
    const help = runSandbox(['--help']);
    expect((await help.exited).code).toBe(0);
    for (const text of ['X-Sandbox: true', 'POST /__sandbox/reset', 'Bearer sandbox', 'NODE_ENV=production', 'DATABASE_URL', 'default 4011', 'default 127.0.0.1']) {
      expect(help.output()).toContain(text);
    }
  });
});
