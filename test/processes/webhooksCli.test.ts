/**
 * `npm run webhooks`, as an operator and an integration's developer run it: processes on a SQLite
 * file (add, list, rotate, remove, deliveries, replay and their refusals), and `listen` subscribed
 * to a real server on that file, to the sandbox, and forwarding to a receiver of the test's own.
 * What delivery does is in test/storage/webhooks.test.ts; here, what the commands print and do.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startProcess, stopProcess, waitForHttp, waitForOutput, type RunningProcess } from '../../scripts/lib/processes.js';
import { projectRoot } from '../../src/shared/paths.js';
import { createLogger } from '../../src/shared/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { openSqlite } from '../../src/store/database.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { testConfig } from '../support/server.js';

const run = promisify(execFile);
const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');
/** A public address: `add` resolves and checks the host, and this machine may have no DNS. */
const PUBLIC = 'https://93.184.215.14/animal-store';

describe('npm run webhooks (CLI, on a SQLite file)', () => {
  const dirs: string[] = [];
  const children: RunningProcess[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    // SIGTERM: tsx passes it on to the node it started (SIGKILL would leave that one running).
    for (const child of children.splice(0)) if (child.running()) await stopProcess(child, 'SIGTERM');
    for (const close of closers.splice(0).reverse()) await close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-webhooks-cli-'));
    dirs.push(dir);
    return dir;
  };
  const envOf = (dir: string, extra: Record<string, string> = {}) => ({ ...process.env, SQLITE_PATH: join(dir, 'store.sqlite'), DATABASE_URL: '', ...extra });
  const cli = (dir: string, args: string[], extra: Record<string, string> = {}) => run(tsx, ['scripts/operators/webhooks.ts', ...args], { cwd: projectRoot, env: envOf(dir, extra) });
  const listen = (dir: string, args: string[] = []) => {
    const child = startProcess(tsx, ['scripts/operators/webhooks.ts', 'listen', ...args], { cwd: projectRoot, env: envOf(dir) });
    children.push(child);
    return child;
  };

  it('add prints the secret once as its last line; list, rotate, remove, deliveries and replay do what they say, and never show a secret', async () => {
    const dir = newDir();
    const added = await cli(dir, ['add', PUBLIC, '--events', 'petCreated,petDeleted']);
    const secret = added.stdout.trim().split('\n').at(-1) ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(added.stderr).toContain('Added endpoint 1 for petCreated, petDeleted');
    await cli(dir, ['add', `${PUBLIC}/all`]);
    const listed = (await cli(dir, ['list'])).stdout;
    expect(listed).toMatch(/^1\s+https:\/\/93\.184\.215\.14\/animal-store\s+petCreated,petDeleted\s+enabled\s+-\s+-\s+0$/m);
    expect(listed).toMatch(/^2\s+\S+\/all\s+\(every event\)\s+enabled/m);
    expect(listed).not.toContain(secret.slice(6, 20));

    const rotated = (await cli(dir, ['rotate', '1'])).stdout.trim().split('\n').at(-1) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect((await cli(dir, ['list'])).stdout).not.toContain(rotated.slice(6, 20));
    expect((await cli(dir, ['deliveries', '1'])).stdout).toContain('No attempts yet for endpoint 1.');
    expect((await cli(dir, ['remove', '2'])).stdout).toContain('Removed endpoint 2');
    expect((await cli(dir, ['list'])).stdout).not.toMatch(/^2\s/m);

    for (const args of [['rotate', '9'], ['remove', '9'], ['deliveries', '9'], ['replay', 'msg_00000000000000000000000000']]) {
      await expect(cli(dir, args), args.join(' ')).rejects.toMatchObject({ code: 1 });
    }
    for (const args of [['replay', 'nonsense'], ['add'], ['remove', 'x'], ['add', PUBLIC, '--events', 'petAdopted'], ['frobnicate']]) {
      await expect(cli(dir, args), args.join(' ')).rejects.toMatchObject({ code: 2 });
    }
  });

  it.each([
    ['plain http', 'http://93.184.215.14/hook', /plain http/],
    ['loopback', 'https://127.0.0.1/hook', /not on the public Internet/],
    ['a private address', 'https://10.1.2.3/hook', /not on the public Internet/],
    ['IPv6 loopback', 'https://[::1]/hook', /not on the public Internet/],
    ['localhost', 'https://localhost/hook', /this machine/],
    ['a password in the URL', 'https://user:pw@93.184.215.14/hook', /user name or password/],
    ['a host that does not resolve', 'https://hooks.animal-store.invalid/hook', /does not resolve/],
  ])('add refuses %s in one line, exit 2', async (_what, url, reason) => {
    const dir = newDir();
    const refused = cli(dir, ['add', url]);
    await expect(refused).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(reason) });
    const { stderr } = (await refused.catch((error: unknown) => error)) as { stderr: string };
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).not.toContain('pw@');
  });

  it('with WEBHOOKS_ALLOW_PRIVATE=true, a receiver on this machine is accepted', async () => {
    const dir = newDir();
    const added = await cli(dir, ['add', 'http://127.0.0.1:9/hook'], { WEBHOOKS_ALLOW_PRIVATE: 'true' });
    expect(added.stdout.trim().split('\n').at(-1)).toMatch(/^whsec_/);
  });

  it("listen prints the running server's events, verified, and removes its endpoint on Ctrl-C; deliveries and replay see them", async () => {
    const dir = newDir();
    const database = await openSqlite(join(dir, 'store.sqlite'));
    const server: RunningServer = await startServer({ config: testConfig({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '100' } }), logger: createLogger('silent'), database, bootstrapKey: false });
    closers.push(async () => {
      await server.close();
      await database.close();
    });
    const { key } = await server.keys.create('cli');
    await server.keyCache.refresh();
    const api = `${server.origin}${server.basePath}`;
    const send = (method: string, path: string, body?: unknown, type = 'application/json') =>
      fetch(`${api}${path}`, { method, headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': type }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

    const listener = listen(dir);
    await waitForOutput(listener, /Listening on http:\/\/127\.0\.0\.1:\d+\/ for every event \(endpoint 1\)/, 30_000);
    const pet = (await (await send('POST', '/pets', { name: 'Listened', categoryId: 2 })).json()) as { id: number };
    expect((await send('PATCH', `/pets/${pet.id}`, { status: 'sold' }, 'application/merge-patch+json')).status).toBe(200);
    expect((await send('DELETE', `/pets/${pet.id}`)).status).toBe(204);
    await waitForOutput(listener, /pet\.deleted/, 20_000);
    const lines = listener.output().split('\n').filter((line) => / msg_/.test(line));
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`pet\\.created {2}msg_[0-9A-Z]{26} {2}\\{"id":${pet.id},"name":"Listened","categoryId":2,"status":"available"\\}$`)),
      expect.stringMatching(/pet\.updated {2}msg_\S+ {2}\{"pet":\{.*"status":"sold"\},"changed":\["status"\]\}$/),
      expect.stringMatching(new RegExp(`pet\\.deleted {2}msg_\\S+ {2}\\{"id":${pet.id}\\}$`)),
    ]);
    const ids = lines.map((line) => /msg_\S+/.exec(line)?.[0]);
    expect(new Set(ids).size).toBe(3);

    const attempts = (await cli(dir, ['deliveries', '1'])).stdout;
    for (const id of ids) expect(attempts).toMatch(new RegExp(`${id}\\s+204\\s+-`));
    expect((await cli(dir, ['replay', ids[0] ?? ''])).stdout).toContain('Queued 1 delivery');
    await expect.poll(() => listener.output().split('\n').filter((line) => line.includes(ids[0] ?? '-')).length, { timeout: 10_000 }).toBe(2);

    listener.child.kill('SIGINT');
    expect((await listener.exited).code).toBe(0);
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');
  });

  it("listen --sandbox prints the sandbox's events; --forward-to passes each on unchanged and prints the receiver's answer", async () => {
    const dir = newDir();
    const port = await freePort();
    const sandbox = startProcess(tsx, ['scripts/sandbox.ts', '--port', String(port)], { cwd: projectRoot, env: { ...process.env, NODE_ENV: '', DATABASE_URL: '' } });
    children.push(sandbox);
    const origin = `http://127.0.0.1:${port}`;
    await waitForHttp(`${origin}/v1/pets`, sandbox);
    const receiver: Receiver = await startReceiver(() => ({ status: 202 }));
    closers.push(() => receiver.close());

    const listener = listen(dir, ['--sandbox', origin, '--forward-to', receiver.url]);
    await waitForOutput(listener, /Listening on .* of the sandbox at/, 30_000);
    const created = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: { Authorization: 'Bearer sandbox', 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Sandboxed', categoryId: 1 }) });
    expect(created.status).toBe(201);
    await waitForOutput(listener, / -> http:\/\/127\.0\.0\.1:\d+\/hooks: 202/, 20_000);
    expect(listener.output()).toMatch(/pet\.created {2}msg_\S+ {2}\{"id":\d+,"name":"Sandboxed"/);
    const [forwarded] = receiver.deliveries;
    expect(forwarded?.body).toMatch(/^\{"type":"pet\.created","timestamp":"[^"]+","data":\{"id":\d+,"name":"Sandboxed","categoryId":1,"status":"available"\}\}$/);
    expect(forwarded?.id).toMatch(/^msg_/);
    expect(forwarded?.signature).toMatch(/^v1,/);
    expect(forwarded?.headers['content-type']).toBe('application/json');

    listener.child.kill('SIGINT');
    expect((await listener.exited).code).toBe(0);
    // Removed from the sandbox: its route no longer knows the endpoint.
    expect((await fetch(`${origin}/__sandbox/webhooks/1`, { method: 'DELETE' })).status).toBe(404);
  });

  it('listen --sandbox where no sandbox answers says so and exits 1', async () => {
    const dir = newDir();
    const port = await freePort();
    const listener = listen(dir, ['--sandbox', `http://127.0.0.1:${port}`]);
    expect((await listener.exited).code).toBe(1);
    expect(listener.output()).toContain(`No sandbox answers at http://127.0.0.1:${port}`);
  });
});
