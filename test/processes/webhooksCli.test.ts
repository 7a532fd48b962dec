/**
 * `npm run webhooks`, as an operator and an integration's developer run it: the command as a
 * process on a SQLite file (add, list, rotate, remove, deliveries, replay and their refusals), and
 * `listen` subscribed to the real server run as a process on that file (`node --import tsx
 * src/main.ts`), forwarding to a receiver of the test's own, and subscribed to the sandbox
 * (`scripts/sandbox.ts`, as `npm run sandbox` runs it). What delivery does is in
 * test/storage/webhooks.test.ts; here, what the commands print and do.
 *
 * Every child runs in a process group of its own: Ctrl-C is sent to the group, as a terminal sends
 * it, and after each test every group must be gone. The CLI runs as `npm run webhooks` runs it (node
 * --import tsx): the tsx CLI in front gave a child 30 ms to say it handles Ctrl-C, then exited 130 (CI, loaded).
 * `add` resolves the host and checks its addresses, and this machine may have no DNS: accepted
 * endpoints are literal public addresses, and a name that does not resolve is one of the refusals.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/index.js';
import { freePort, processGroupAlive, startProcess, waitForHttp, waitForOutput, type RunningProcess, type StartOptions } from '../../scripts/lib/processes.js';
import { projectRoot } from '../../src/shared/paths.js';
import { openSqlite } from '../../src/store/database.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const run = promisify(execFile);
/** Public addresses (93.184.215.0/24): accepted without a DNS lookup. */
const PUBLIC = 'https://93.184.215.14/animal-store';
/** The hint a refusal carries when WEBHOOKS_ALLOW_PRIVATE would let the URL through. */
const HINT = '(WEBHOOKS_ALLOW_PRIVATE=true allows http and internal addresses, for development only)';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const lastLine = (text: string): string => text.trim().split('\n').at(-1) ?? '';
/** Runs `tasks` two at a time (this machine's cores), in their order: commands that only read or are refused. */
async function twoAtATime<T extends unknown[]>(tasks: [...{ [K in keyof T]: () => Promise<T[K]> }]): Promise<T> {
  const results: unknown[] = [];
  for (let i = 0; i < tasks.length; i += 2) results.push(...(await Promise.all(tasks.slice(i, i + 2).map((task) => (task as () => Promise<unknown>)()))));
  return results as T;
}
const msgIds = (text: string): string[] => [...text.matchAll(/\bmsg_[0-9A-Za-z]{26}\b/g)].map((match) => match[0]);

describe('npm run webhooks (CLI processes on a SQLite file)', () => {
  const dirs: string[] = [];
  const children: RunningProcess[] = [];
  const closers: Array<() => Promise<unknown>> = [];

  /** Stops a child's whole group (SIGTERM, then SIGKILL after 10 s) and fails when any of it is left. */
  const stopGroup = async (proc: RunningProcess): Promise<void> => {
    const pid = proc.child.pid;
    if (pid === undefined) return;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-pid, name);
      } catch {
        // The group is gone already.
      }
    };
    if (processGroupAlive(pid)) signal('SIGTERM');
    const deadline = Date.now() + 10_000;
    while (processGroupAlive(pid) && Date.now() < deadline) await sleep(50);
    if (processGroupAlive(pid)) signal('SIGKILL');
    await proc.exited;
    await expect.poll(() => processGroupAlive(pid), { timeout: 5_000, message: `a process of ${proc.child.spawnargs.join(' ')} is left` }).toBe(false);
  };

  afterEach(async () => {
    const stopping = children.splice(0);
    await Promise.all(stopping.map(stopGroup));
    for (const close of closers.splice(0).reverse()) await close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-webhooks-cli-'));
    dirs.push(dir);
    return dir;
  };
  const envOf = (dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, SQLITE_PATH: join(dir, 'store.sqlite'), DATABASE_URL: '', ...extra });
  /** `npm run webhooks -- <args>` as a finished process: its exit code and what it printed. */
  const cli = (dir: string, args: string[], extra: Record<string, string> = {}): Promise<Ran> =>
    run(process.execPath, ['--import', 'tsx', 'scripts/operators/webhooks.ts', ...args], { cwd: projectRoot, env: envOf(dir, extra), timeout: 50_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: unknown; stdout?: string; stderr?: string }) => ({ code: typeof error.code === 'number' ? error.code : null, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
  /** A long-running child in a process group of its own. */
  const spawnChild = (command: string, args: string[], options: StartOptions): RunningProcess => {
    const child = startProcess(command, args, { cwd: projectRoot, detached: true, ...options });
    children.push(child);
    return child;
  };
  const listen = (dir: string, args: string[] = []) => spawnChild(process.execPath, ['--import', 'tsx', 'scripts/operators/webhooks.ts', 'listen', ...args], { env: envOf(dir) });
  /** Ctrl-C as a terminal sends it: SIGINT to the whole foreground group. */
  const ctrlC = (proc: RunningProcess) => {
    const pid = proc.child.pid;
    if (pid === undefined) throw new Error('the process never started');
    process.kill(-pid, 'SIGINT');
  };

  /** The real server as `npm start` runs it, from the sources, on the test's file: its base URL and the key it printed. */
  const startApi = async (dir: string): Promise<{ api: RunningProcess; base: string; key: string }> => {
    const api = spawnChild(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: envOf(dir, { NODE_ENV: 'production', PORT: '0', LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '100' }),
    });
    const base = await waitForOutput(api, /listening on (http:\/\/\S+\/v1)/, 30_000);
    // The key it made because none existed, shown once in the same banner.
    const key = await waitForOutput(api, /^\s+(ask_[A-Za-z0-9_-]{43})$/m, 5_000);
    return { api, base, key };
  };
  const sender = (base: string, key: string) => (method: string, path: string, body?: unknown, type = 'application/json') =>
    fetch(`${base}${path}`, { method, headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': type }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  it('add prints the secret once as its last line; list, rotate, remove and deliveries do what they say, and never show a secret', async () => {
    const dir = newDir();
    const added = await cli(dir, ['add', PUBLIC, '--events', 'petCreated,petDeleted']);
    expect(added.code, added.stderr).toBe(0);
    const secret = lastLine(added.stdout);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(added.stderr).toContain('Added endpoint 1 for petCreated, petDeleted');
    const every = await cli(dir, ['add', `${PUBLIC}/all`]);
    expect(every.stderr).toContain('Added endpoint 2 for every event');
    const otherSecret = lastLine(every.stdout);
    expect(otherSecret).toMatch(/^whsec_/);
    expect(otherSecret).not.toBe(secret);

    const listed = await cli(dir, ['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^id\s+url\s+events\s+state\s+last success\s+last failure\s+pending$/m);
    expect(listed.stdout).toMatch(/^1\s+https:\/\/93\.184\.215\.14\/animal-store\s+petCreated,petDeleted\s+enabled\s+-\s+-\s+0$/m);
    expect(listed.stdout).toMatch(/^2\s+https:\/\/93\.184\.215\.14\/animal-store\/all\s+\(every event\)\s+enabled\s+-\s+-\s+0$/m);
    for (const shown of [listed.stdout, listed.stderr]) {
      expect(shown).not.toContain('whsec_');
      expect(shown).not.toContain(secret.slice(6, 14));
      expect(shown).not.toContain(otherSecret.slice(6, 14));
    }

    const rotated = await cli(dir, ['rotate', '1']);
    expect(rotated.code).toBe(0);
    const newSecret = lastLine(rotated.stdout);
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(secret);
    expect(rotated.stderr).toContain('Rotated the secret of endpoint 1');
    const afterRotate = (await cli(dir, ['list'])).stdout;
    expect(afterRotate).not.toContain(newSecret.slice(6, 14));
    expect(afterRotate).not.toContain(secret.slice(6, 14));

    const none = await cli(dir, ['deliveries', '1']);
    expect(none).toMatchObject({ code: 0, stdout: 'No attempts yet for endpoint 1.\n' });
    const removed = await cli(dir, ['remove', '2']);
    expect(removed).toMatchObject({ code: 0, stdout: expect.stringContaining('Removed endpoint 2') });
    const afterRemove = (await cli(dir, ['list'])).stdout;
    expect(afterRemove).toMatch(/^1\s/m);
    expect(afterRemove).not.toMatch(/^2\s/m);
  });

  it('an id that is not there is one line and exit 1; a usage error is its message, then the help, and exit 2; neither changes anything', async () => {
    const dir = newDir();
    expect((await cli(dir, ['add', PUBLIC])).code).toBe(0);
    const [rotate999, remove999, deliveries999, replayUnknown, replayNonsense, unknownEvent, noUrl, notAnId, unknownCommand] = await twoAtATime([
      () => cli(dir, ['rotate', '999']),
      () => cli(dir, ['remove', '999']),
      () => cli(dir, ['deliveries', '999']),
      () => cli(dir, ['replay', 'msg_00000000000000000000000000']),
      () => cli(dir, ['replay', 'nonsense']),
      () => cli(dir, ['add', PUBLIC, '--events', 'petAdopted']),
      () => cli(dir, ['add']),
      () => cli(dir, ['remove', 'x']),
      () => cli(dir, ['frobnicate']),
    ]);
    for (const notFound of [rotate999, remove999, deliveries999]) expect(notFound).toMatchObject({ code: 1, stdout: '', stderr: 'No endpoint has id 999.\n' });
    expect(replayUnknown).toMatchObject({ code: 1, stdout: '', stderr: 'No event has id msg_00000000000000000000000000.\n' });
    expect(replayNonsense.code).toBe(2);
    expect(replayNonsense.stderr).toMatch(/^replay needs one event id \(msg_…, as `deliveries` shows it\)\n\nUsage: /);
    expect(unknownEvent.code).toBe(2);
    expect(unknownEvent.stderr.split('\n')[0]).toMatch(/^--events takes the spec's webhooks \(petCreated, .*\); unknown: petAdopted$/);
    expect(noUrl).toMatchObject({ code: 2, stderr: expect.stringMatching(/^add needs one URL\n/) });
    expect(notAnId).toMatchObject({ code: 2, stderr: expect.stringMatching(/^remove needs one endpoint id/) });
    expect(unknownCommand).toMatchObject({ code: 2, stderr: expect.stringMatching(/^Unknown command: frobnicate\n/) });
    // Nothing refused was stored, nothing missing was changed: the header and endpoint 1.
    expect((await cli(dir, ['list'])).stdout).toMatch(/^id .*\n1\s+https:\/\/93\.184\.215\.14\/animal-store\s+\(every event\)\s+enabled\s+-\s+-\s+0\n$/);
  });

  it('add refuses what is not a public https endpoint in one line, exit 2, and stores none; WEBHOOKS_ALLOW_PRIVATE=true lets a receiver on this machine in', async () => {
    const dir = newDir();
    const cases: Array<[string, RegExp, boolean]> = [
      ['http://hooks.example.com/animal-store', /the URL for hooks\.example\.com is plain http: only https: is allowed/, true],
      ['https://127.0.0.1/', /the address 127\.0\.0\.1 is not on the public Internet/, true],
      ['https://10.1.2.3/x', /the address 10\.1\.2\.3 is not on the public Internet/, true],
      ['https://[::1]/', /the address \[::1\] is not on the public Internet/, true],
      ['https://localhost/', /the host localhost is this machine/, true],
      ['https://user:pw@hooks.example.com/', /the URL for hooks\.example\.com carries a user name or password\.$/, false],
      ['ftp://93.184.215.14/hook', /the scheme ftp: is not http: or https:\.$/, false],
      // .invalid never resolves (RFC 6761): a name that does not resolve is refused, not stored to fail every attempt.
      ['https://hooks.animal-store.invalid/hook', /^The endpoint's host does not resolve \((ENOTFOUND|EAI_AGAIN)\): add it once its DNS name answers\.$/, false],
    ];
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');
    const results = await twoAtATime(cases.map(([url]) => () => cli(dir, ['add', url])));
    cases.forEach(([url, reason, hinted], i) => {
      const { code, stdout, stderr } = results[i] as Ran;
      const line = stderr.trim();
      expect({ url, code, stdout, lines: stderr.trim().split('\n').length }).toEqual({ url, code: 2, stdout: '', lines: 1 });
      expect(line, url).toMatch(reason);
      if (!/does not resolve/.test(line)) expect(line, url).toMatch(/^The endpoint is refused: /);
      expect(line.includes(HINT), `${url}: ${line}`).toBe(hinted);
      // Neither the password nor the user name is echoed: this line can end up in a terminal's scrollback or a CI log.
      expect(line, url).not.toContain('pw');
      expect(line, url).not.toContain('user:');
    });
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');

    const local = await cli(dir, ['add', 'http://127.0.0.1:9/hook'], { WEBHOOKS_ALLOW_PRIVATE: 'true' });
    expect(local.code, local.stderr).toBe(0);
    expect(lastLine(local.stdout)).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await cli(dir, ['list'])).stdout).toMatch(/^1\s+http:\/\/127\.0\.0\.1:9\/hook\s+\(every event\)\s+enabled\s+-\s+-\s+0$/m);
    // A password stays refused with it: the setting is about addresses, not about a secret in the URL.
    const withPassword = await cli(dir, ['add', 'http://user:pw@127.0.0.1:9/hook'], { WEBHOOKS_ALLOW_PRIVATE: 'true' });
    expect(withPassword).toMatchObject({ code: 2, stderr: 'The endpoint is refused: the URL for 127.0.0.1 carries a user name or password.\n' });
  });

  it("listen prints the real server's events, verified; deliveries and replay see them; Ctrl-C exits 0 and removes its endpoint", async () => {
    const dir = newDir();
    const { base, key } = await startApi(dir);
    const send = sender(base, key);

    const listener = listen(dir);
    await waitForOutput(listener, /Listening on http:\/\/127\.0\.0\.1:\d+\/ for every event \(endpoint 1\)/, 30_000);
    const created = await send('POST', '/pets', { name: 'Listened', categoryId: 2 });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    expect((await send('PATCH', `/pets/${pet.id}`, { status: 'sold' }, 'application/merge-patch+json')).status).toBe(200);
    expect((await send('DELETE', `/pets/${pet.id}`)).status).toBe(204);
    // Delivered at least once and in no promised order (the contract says so): each is looked for by its type.
    const printed = () => listener.output().split('\n').filter((line) => / msg_/.test(line));
    await expect.poll(() => printed().length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const lines = printed();
    expect(lines).toHaveLength(3);
    const expected = [
      new RegExp(`^\\S+Z {2}pet\\.created {2}(msg_[0-9A-Za-z]{26}) {2}\\{"id":${pet.id},"name":"Listened","categoryId":2,"status":"available"\\}$`),
      /^\S+Z {2}pet\.updated {2}(msg_[0-9A-Za-z]{26}) {2}\{"pet":\{"id":\d+,"name":"Listened","categoryId":2,"status":"sold"\},"changed":\["status"\]\}$/,
      new RegExp(`^\\S+Z {2}pet\\.deleted {2}(msg_[0-9A-Za-z]{26}) {2}\\{"id":${pet.id}\\}$`),
    ];
    const ids = expected.map((pattern) => {
      const found = lines.map((line) => pattern.exec(line)).filter((match) => match !== null);
      expect(found, `${String(pattern)} in\n${lines.join('\n')}`).toHaveLength(1);
      return found[0]?.[1] ?? '';
    });
    expect(listener.output()).not.toContain('NOT VERIFIED');
    expect(new Set(ids).size).toBe(3);

    // The server settles each attempt right after the answer: poll until all three are recorded.
    const attempts = async () => (await cli(dir, ['deliveries', '1'])).stdout;
    await expect.poll(async () => msgIds(await attempts()).length, { timeout: 15_000 }).toBe(3);
    const table = await attempts();
    expect(table).toMatch(/^time\s+event\s+id\s+status\s+error\s+ms$/m);
    for (const [event, id] of [['petCreated', ids[0]], ['petUpdated', ids[1]], ['petDeleted', ids[2]]]) expect(table).toMatch(new RegExp(`^\\S+Z\\s+${event}\\s+${id}\\s+204\\s+-\\s+\\d+$`, 'm'));
    expect((await cli(dir, ['list'])).stdout).toMatch(/^1\s+http:\/\/127\.0\.0\.1:\d+\/\s+\(every event\)\s+enabled\s+\d{4}-\d\d-\d\dT\S+Z\s+-\s+0$/m);

    // Replayed: delivered again with the same webhook-id (a receiver dedupes by it).
    const replayed = await cli(dir, ['replay', ids[0] ?? '']);
    expect(replayed).toMatchObject({ code: 0, stdout: expect.stringContaining(`Queued 1 delivery of ${ids[0]}`) });
    await expect.poll(() => msgIds(listener.output()).filter((id) => id === ids[0]).length, { timeout: 15_000 }).toBe(2);

    ctrlC(listener);
    expect(await listener.exited).toEqual({ code: 0, signal: null });
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');
    expect((await cli(dir, ['deliveries', '1'])).code).toBe(1);
  });

  it('listen --forward-to passes each delivery on with its headers and body unchanged (it verifies with the endpoint secret) and answers with the receiver\'s status', async () => {
    const dir = newDir();
    const { base, key } = await startApi(dir);
    const send = sender(base, key);
    const receiver: Receiver = await startReceiver(() => ({ status: 202 }));
    closers.push(() => receiver.close());

    const listener = listen(dir, ['--events', 'petCreated', '--forward-to', receiver.url]);
    await waitForOutput(listener, /Listening on http:\/\/127\.0\.0\.1:\d+\/ for petCreated \(endpoint 1\)/, 30_000);
    const created = await send('POST', '/pets', { name: 'Forwarded', categoryId: 3 });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    expect((await send('DELETE', `/pets/${pet.id}`)).status).toBe(204);
    await waitForOutput(listener, new RegExp(`^ {2}-> ${receiver.url.replaceAll('.', '\\.')}: 202$`, 'm'), 30_000);
    const [id] = msgIds(listener.output());
    expect(listener.output()).toMatch(new RegExp(`pet\\.created {2}${id} {2}\\{"id":${pet.id},"name":"Forwarded"`));

    expect(receiver.deliveries).toHaveLength(1);
    const [forwarded] = receiver.deliveries;
    if (forwarded === undefined) throw new Error('nothing forwarded');
    expect(forwarded.id).toBe(id);
    expect(forwarded.headers['content-type']).toBe('application/json');
    expect(forwarded.timestamp).toMatch(/^\d{10}$/);
    expect(forwarded.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // The secret `listen` subscribed with is not printed: read from the file, it verifies what was forwarded.
    const database = await openSqlite(join(dir, 'store.sqlite'));
    const { rows } = await sql<{ secret: string }>`select secret from webhook_endpoints where id = 1`.execute(database.db).finally(() => database.close());
    const event = verifyWebhook(rows[0]?.secret ?? '', forwarded.headers, forwarded.body);
    expect(event).toMatchObject({ type: 'pet.created', data: { id: pet.id, name: 'Forwarded', categoryId: 3, status: 'available' } });
    // The receiver's 202 was the listener's answer to the server.
    await expect.poll(async () => (await cli(dir, ['deliveries', '1'])).stdout, { timeout: 15_000 }).toMatch(new RegExp(`^\\S+Z\\s+petCreated\\s+${id}\\s+202\\s+-`, 'm'));

    // A receiver that is down: the listener says why and answers 502, which the server records as a failure.
    await receiver.down();
    const second = (await (await send('POST', '/pets', { name: 'Unforwarded', categoryId: 3 })).json()) as { id: number };
    await waitForOutput(listener, new RegExp(`^ {2}-> ${receiver.url.replaceAll('.', '\\.')}: (?!202)(.+)$`, 'm'), 30_000);
    const failedId = msgIds(listener.output()).at(-1);
    expect(listener.output()).toContain(`"id":${second.id},"name":"Unforwarded"`);
    await expect.poll(async () => (await cli(dir, ['deliveries', '1'])).stdout, { timeout: 15_000 }).toMatch(new RegExp(`^\\S+Z\\s+petCreated\\s+${failedId}\\s+502\\s+`, 'm'));

    // The deletion was not subscribed to: never printed, never forwarded.
    expect(listener.output()).not.toContain('pet.deleted');
    expect(receiver.deliveries.map((d) => d.id)).toEqual([id]);

    ctrlC(listener);
    expect(await listener.exited).toEqual({ code: 0, signal: null });
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');
  });

  it("listen --sandbox prints the sandbox's events, verified, and Ctrl-C removes its subscription there", async () => {
    const dir = newDir();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    // As `npm run sandbox` runs it (exec node --import tsx scripts/sandbox.ts), as a developer does: no NODE_ENV, no DATABASE_URL.
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_ENV;
    delete env.DATABASE_URL;
    const sandbox = spawnChild(process.execPath, ['--import', 'tsx', 'scripts/sandbox.ts', '--port', String(port)], { env });
    await waitForHttp(`${origin}/v1/pets`, sandbox);

    const listener = listen(dir, ['--sandbox', origin]);
    const endpoint = await waitForOutput(listener, /Listening on http:\/\/127\.0\.0\.1:\d+\/ for every event \(endpoint (\d+) of the sandbox at http:\/\/127\.0\.0\.1:\d+\)/, 30_000);
    const created = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: { Authorization: 'Bearer sandbox', 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Sandboxed', categoryId: 1 }) });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    await waitForOutput(listener, /pet\.created/, 30_000);
    expect(listener.output()).toMatch(new RegExp(`^\\S+Z {2}pet\\.created {2}msg_[0-9A-Za-z]{26} {2}\\{"id":${pet.id},"name":"Sandboxed","categoryId":1,"status":"available"\\}$`, 'm'));
    expect(listener.output()).not.toContain('NOT VERIFIED');
    // Not the file's endpoints: the sandbox keeps its own.
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');

    ctrlC(listener);
    expect(await listener.exited).toEqual({ code: 0, signal: null });
    // Removed from the sandbox: its route no longer knows the endpoint.
    expect((await fetch(`${origin}/__sandbox/webhooks/${endpoint}`, { method: 'DELETE' })).status).toBe(404);
    expect(sandbox.running()).toBe(true);
  });

  it('listen refuses in one line what it cannot do: no sandbox at that origin (exit 1), a port or an event that is not one (exit 2)', async () => {
    const dir = newDir();
    const port = await freePort();
    const [nothing, badPort, badEvent] = await twoAtATime([
      () => cli(dir, ['listen', '--sandbox', `http://127.0.0.1:${port}`]),
      () => cli(dir, ['listen', '--port', '99999']),
      () => cli(dir, ['listen', '--events', 'petAdopted']),
    ]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(new RegExp(`^No sandbox answers at http://127\\.0\\.0\\.1:${port} \\(.+\\): start it with \`npm run sandbox\`\\.\\n$`));
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/^--port takes a port number \(0 to 65535\)\n\nUsage: /);
    expect(badEvent.code).toBe(2);
    expect(badEvent.stderr).toMatch(/^--events takes the spec's webhooks \(.*\); unknown: petAdopted\n/);
    for (const ran of [nothing, badPort, badEvent]) expect(ran.stderr).not.toMatch(/^\s+at /m);
    // None of them subscribed anything on the file.
    expect((await cli(dir, ['list'])).stdout).toContain('No endpoints.');
  });
});
