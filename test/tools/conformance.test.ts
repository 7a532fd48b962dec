/**
 * `npm run conformance` as a user runs it: Redocly Respect and the Arazzo workflows of
 * conformance/ against the real server (SQLite; PostgreSQL when DATABASE_URL is set) with an
 * issued key, and against `npm run sandbox` with its key, read-only and with --write. It must pass
 * there, with its summary line, and never print the key; and it must fail, naming what broke,
 * against a server whose getPet answer lacks a header the contract requires, and with a key the
 * deployment never issued.
 *
 * Most runs call its main (scripts/lib/conformance/conformanceCommand.ts) in this process, Respect
 * still its child: npm and a TypeScript start per run cost more than the script's own work. The run
 * against the real server and one refused run go through `npm run conformance`, to prove the
 * command's wiring (its arguments, environment, output and exit status).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as conformanceMain } from '../../scripts/lib/conformance/conformanceCommand.js';
import { projectRoot } from '../../src/shared/paths.js';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { addPets, startTestServer, type Target, type TestServer } from '../support/server.js';

const HOST = '127.0.0.1';
const PASSED = /^Conformance PASSED: (\d+) workflows, (\d+) steps, (\d+) checks passed, 0 failed; /m;
const FAILED = /^Conformance FAILED: .*\d+ checks passed, [1-9]\d* failed; /m;

/** The environment of a user's shell: none of vitest's, and no DATABASE_URL (the sandbox refuses to start with one). */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ['NODE_ENV', 'VITEST', 'VITEST_WORKER_ID', 'VITEST_POOL_ID', 'DATABASE_URL', 'CONFORMANCE_KEY']) if (!(name in extra)) delete env[name];
  return env;
}

/** `npm run conformance -- <args>` as a user runs it: its exit code and its output, stdout and stderr interleaved. */
async function conformanceCommand(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const run = startProcess('npm', ['run', '-s', 'conformance', '--', ...args], { cwd: projectRoot, env: userEnv(env) });
  const exit = await run.exited;
  return { code: exit.code, output: run.output() };
}

/** The same run, in this process: what the command would print, in order, and its exit code. */
async function conformance(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const output: string[] = [];
  // npm runs the script with its output piped, so Respect is told there is no terminal.
  const code = await conformanceMain(args, { stdout: (text) => output.push(text), stderr: (text) => output.push(text), env: userEnv(env), isTTY: false });
  return { code, output: output.join('') };
}

/** The counts of the summary line: workflows, steps, checks passed. */
function counts(output: string): number[] {
  const match = PASSED.exec(output);
  expect(match, output).not.toBeNull();
  return (match ?? []).slice(1, 4).map(Number);
}

const targets: Target[] = ['sqlite', 'postgres'];

describe.each(targets)('npm run conformance -- --write against the real server [%s]', (target) => {
  const skip = target === 'postgres' && !process.env.DATABASE_URL;
  if (skip) console.warn('DATABASE_URL is not set: npm run conformance against the real server on PostgreSQL is skipped.');
  let server: TestServer | undefined;

  beforeAll(async () => {
    if (!skip) server = await startTestServer(target);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.skipIf(skip)(`passes with an issued key (--key), runs every workflow, follows the Link, and never prints the key${skip ? ' (skipped: DATABASE_URL is not set)' : ''}`, async () => {
    if (!server) throw new Error('server not started');
    const { code, output } = await conformanceCommand(['--server', server.api, '--key', server.key, '--write']);
    expect(code, output).toBe(0);
    // 3 writing workflows, 5 read-only ones and the next page: the empty store kept two pets, so a page of one links on.
    expect(counts(output).slice(0, 2), output).toEqual([9, 26]);
    expect(output).toContain('Following the Link rel="next"');
    expect(output).not.toContain(server.key);
    // The server checks its own responses against the contract too: it saw nothing wrong either.
    expect(server.server.violations.splice(0)).toEqual([]);
  });
});

describe('npm run conformance against npm run sandbox', () => {
  let sandbox: RunningProcess | undefined;
  let base = '';

  beforeAll(async () => {
    const port = await freePort(HOST);
    base = `http://${HOST}:${port}/v1`;
    sandbox = startProcess('npm', ['run', '-s', 'sandbox', '--', '--port', String(port)], { cwd: projectRoot, env: userEnv() });
    await waitForHttp(`${base}/pets`, sandbox);
  });
  afterAll(async () => {
    // SIGTERM: the sandbox stops and deletes its throwaway store.
    if (sandbox) await stopProcess(sandbox);
  });

  it('read-only passes with the key "sandbox" (its seeds make a next page to follow)', async () => {
    const { code, output } = await conformance(['--server', base, '--key', 'sandbox']);
    expect(code, output).toBe(0);
    expect(counts(output).slice(0, 2), output).toEqual([6, 13]);
    expect(output).toMatch(/\(read-only\), [\d.]+ s\.$/m);
  });

  it('--write passes, the key given in CONFORMANCE_KEY', async () => {
    const { code, output } = await conformance(['--server', base, '--write'], { CONFORMANCE_KEY: 'sandbox' });
    expect(code, output).toBe(0);
    expect(counts(output).slice(0, 2), output).toEqual([9, 26]);
  });

  it('fails with a key the sandbox never issued: 401 where 200 is expected, in a readable line', async () => {
    const wrongKey = `ask_${'x'.repeat(43)}`;
    const { code, output } = await conformance(['--server', base, '--key', wrongKey]);
    expect(code, output).toBe(1);
    expect(output).toMatch(FAILED);
    expect(output).toMatch(/^ {2}✗ conformance\/read\.arazzo\.yaml › listAndPage › listPets: GET http:\/\/\S+\/v1\/pets answered 401 unauthorized/m);
    expect(output).toMatch(/^ {6}✗ \$statusCode == 200$/m);
    expect(output).not.toContain(wrongKey);
  });
});

describe('npm run conformance against a server whose getPet answer lacks the Deprecation header', () => {
  let server: TestServer | undefined;
  let proxy: Server | undefined;
  let base = '';

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    // Two pets, so that the read-only run has a pet to get and a next page to follow.
    await addPets(server, 2);
    const upstream = new URL(server.origin);
    // The real server, with one violation: its 200 to GET /v1/pets/{id} loses a header the contract requires.
    proxy = createServer((req, res) => {
      const forwarded = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        const headers = { ...answer.headers };
        if (req.method === 'GET' && /^\/v1\/pets\/\d+$/.test(req.url ?? '') && answer.statusCode === 200) delete headers.deprecation;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      });
      forwarded.on('error', () => res.destroy());
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy?.listen(0, HOST, resolve));
    base = `http://${HOST}:${(proxy.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await server?.close();
  });

  it('exits 1, names the step and the header, and the other workflows still pass', async () => {
    if (!server) throw new Error('server not started');
    const { code, output } = await conformance(['--server', base, '--key', server.key]);
    expect(code, output).toBe(1);
    expect(output).toMatch(FAILED);
    expect(output).toMatch(/^ {2}✗ conformance\/read\.arazzo\.yaml › deprecatedGetPet › getPet: GET \S+\/v1\/pets\/\d+ answered 200$/m);
    expect(output).toMatch(/^ {6}✗ \$response\.header\.Deprecation matches /m);
    expect(output).toMatch(/^ {8}Deprecation: \(absent\)$/m);
    // One failed check; the other workflows, and the next page, still ran and passed.
    expect(output).toMatch(/^Conformance FAILED: 6 workflows \(1 failed\), 12 steps \(1 failed\), \d+ checks passed, 1 failed; /m);
    expect(output).not.toContain(server.key);
  });
});

describe('npm run conformance, asked for help or used wrongly', () => {
  it('--help explains the options and the exit codes; no key, or a base URL without /v1, is exit 2', async () => {
    // Nothing is requested from a server in any of the three: they can run side by side.
    const [help, noKey, noV1] = await Promise.all([
      conformance(['--help']),
      conformanceCommand(['--server', 'http://127.0.0.1:9/v1']),
      conformance(['--server', 'http://127.0.0.1:9', '--key', 'k']),
    ]);
    expect(help.code, help.output).toBe(0);
    for (const text of ['--server <URL>', '--key <key>', 'CONFORMANCE_KEY', '--write', '--timeout', 'Exit codes: 0']) expect(help.output).toContain(text);
    expect(noKey.code, noKey.output).toBe(2);
    expect(noKey.output).toContain('An API key is required');
    expect(noV1.code, noV1.output).toBe(2);
    expect(noV1.output).toContain('does not end in /v1');
  });
});
