/**
 * CORS as a browser sees it: headless Chromium opens a page served from one origin (a static
 * node:http server) that uses the typed client (client/index.ts, bundled for the browser with
 * esbuild, with test/fixtures/cors-page/page.ts) against the API on another origin. The page lists
 * pets and reads the Link header of the page, follows it, creates a pet and reads Location:
 *
 * - against the real server with CORS_ORIGINS set to the page's origin: everything works, and a
 *   401 Error body is readable too;
 * - against the Prism mock (`npm run mock`): the same calls work (the mock has one page, so no
 *   Link: its documented difference);
 * - against the sandbox (`npm run sandbox`): everything works as on the server, with its one key,
 *   and the pet the page created is there to read back;
 * - against the real server with CORS_ORIGINS unset, or set to another origin: the browser blocks
 *   the page's first call.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { SANDBOX_TOKEN } from '../../src/features/sandbox/token.js';
import { projectRoot } from '../../src/shared/paths.js';
import type { ScenarioResult } from '../fixtures/cors-page/page.js';
import { addPets, startTestServer, type TestServer } from '../support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const HOST = '127.0.0.1';

/** The page's own origin: a static server for the HTML and the bundled script, nothing else. */
async function servePage(): Promise<{ server: Server; origin: string }> {
  const bundle = await build({
    entryPoints: [join(projectRoot, 'test', 'fixtures', 'cors-page', 'page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.contents;
  if (!script) throw new Error('esbuild produced no bundle');
  const html = '<!doctype html><meta charset="utf-8"><title>CORS page</title><script type="module" src="/page.js"></script>';
  const server = createServer((req, res) => {
    if (req.url === '/page.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(script);
    } else if (req.url === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { server, origin: `http://${HOST}:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(!existsSync(CHROMIUM))(`a page on another origin, in headless Chromium, using the typed client (skipped without a browser at ${CHROMIUM})`, () => {
  let pageServer: Server;
  let pageOrigin: string;
  let browser: Browser;
  let withCors: TestServer;
  let withoutCors: TestServer;
  let mock: RunningProcess;
  let mockBase: string;
  let sandbox: RunningProcess;
  let sandboxBase: string;

  /** Opens the page afresh, runs the scenario against `baseUrl`; returns its result and what the console said. */
  async function runPage(baseUrl: string, apiKey: string, tryWrongKey: boolean, origin = pageOrigin): Promise<{ result: ScenarioResult; console: string[]; requests: string[] }> {
    const context = await browser.newContext();
    const page: Page = await context.newPage();
    const messages: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    page.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
    try {
      await page.goto(`${origin}/`, { waitUntil: 'load' });
      await page.waitForFunction(() => 'scenario' in window);
      const result = await page.evaluate(
        ([url, key, wrong]) => (window as unknown as { scenario(u: string, k: string, o: { tryWrongKey: boolean }): Promise<ScenarioResult> }).scenario(url, key, { tryWrongKey: wrong }),
        [baseUrl, apiKey, tryWrongKey] as const,
      );
      return { result, console: messages, requests };
    } finally {
      await context.close();
    }
  }

  beforeAll(async () => {
    ({ server: pageServer, origin: pageOrigin } = await servePage());
    const mockPort = await freePort(HOST);
    mockBase = `http://${HOST}:${mockPort}/v1`;
    mock = startProcess(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/mock.ts', '--host', HOST, '--port', String(mockPort)], { cwd: projectRoot });
    const sandboxPort = await freePort(HOST);
    sandboxBase = `http://${HOST}:${sandboxPort}/v1`;
    // As a frontend developer runs it; the sandbox refuses DATABASE_URL.
    const sandboxEnv = { ...process.env };
    delete sandboxEnv.DATABASE_URL;
    sandbox = startProcess('npm', ['run', '-s', 'sandbox', '--', '--host', HOST, '--port', String(sandboxPort)], { cwd: projectRoot, env: sandboxEnv });
    withCors = await startTestServer('sqlite', { env: { CORS_ORIGINS: pageOrigin } });
    withoutCors = await startTestServer('sqlite');
    // Three pets, so a page of one has a next page.
    await addPets(withCors, 3);
    await addPets(withoutCors, 3);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
    await waitForHttp(`${mockBase}/pets`, mock);
    await waitForHttp(`${sandboxBase}/pets`, sandbox);
  });

  afterAll(async () => {
    await browser?.close();
    await withCors?.close();
    await withoutCors?.close();
    if (mock) await stopProcess(mock);
    if (sandbox) await stopProcess(sandbox);
    await new Promise((resolve) => pageServer?.close(resolve));
  });

  it('the page and the API are on different origins', () => {
    expect(new URL(pageOrigin).origin).not.toBe(new URL(withCors.api).origin);
    expect(new URL(pageOrigin).origin).not.toBe(new URL(mockBase).origin);
  });

  it(`against the real server with CORS_ORIGINS=<the page's origin>: lists, reads Link and follows it, creates and reads Location; a 401 Error is readable`, async () => {
    const { result, console: messages } = await runPage(withCors.api, withCors.key, true);
    expect(result, messages.join('\n')).toMatchObject({ ok: true, listStatus: 200, listed: 1, createStatus: 201 });
    if (!result.ok) return;
    expect(result.link).toMatch(/^<\/v1\/pets\?[^>]*cursor=[^>]+>; rel="next"$/);
    expect(result.next).toEqual({ status: 200, listed: 1 });
    expect(result.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.location).toBe(`/v1/pets/${result.createdId}`);
    expect(result.denied).toEqual({ status: 401, code: 'unauthorized', wwwAuthenticate: expect.stringMatching(/^Bearer/) });
    expect(messages.filter((m) => /CORS/i.test(m))).toEqual([]);
    expect(withCors.server.violations).toEqual([]);
  });

  it('against the Prism mock (npm run mock): the same page works; no Link (the mock has one page)', async () => {
    const { result, console: messages } = await runPage(mockBase, SANDBOX_TOKEN, false);
    expect(result, messages.join('\n')).toMatchObject({ ok: true, listStatus: 200, createStatus: 201 });
    if (!result.ok) return;
    expect(result.listed).toBeGreaterThan(0);
    expect(result.link).toBeNull();
    expect(result.location).toMatch(/^\/v1\/pets\/\d+$/);
    expect(messages.filter((m) => /CORS/i.test(m))).toEqual([]);
  });

  it('against the sandbox (npm run sandbox, key "sandbox"): lists, reads Link and follows it, creates and reads Location, reads its own pet back; a 401 Error is readable', async () => {
    const { result, console: messages } = await runPage(sandboxBase, SANDBOX_TOKEN, true);
    expect(result, messages.join('\n')).toMatchObject({ ok: true, listStatus: 200, listed: 1, createStatus: 201 });
    if (!result.ok) return;
    expect(result.link).toMatch(/^<\/v1\/pets\?[^>]*cursor=[^>]+>; rel="next"$/);
    expect(result.next).toEqual({ status: 200, listed: 1 });
    expect(result.location).toBe(`/v1/pets/${result.createdId}`);
    expect(result.denied).toEqual({ status: 401, code: 'unauthorized', wwwAuthenticate: expect.stringMatching(/^Bearer/) });
    expect(messages.filter((m) => /CORS/i.test(m))).toEqual([]);
    const created = await fetch(`${sandboxBase}/pets/${result.createdId}`, { headers: { Authorization: `Bearer ${SANDBOX_TOKEN}` } });
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ id: result.createdId, name: 'Biscuit', categoryId: 2 });
  });

  it('against the real server with CORS_ORIGINS unset: the browser blocks the page\'s first call', async () => {
    const before = (await withoutCors.request('/pets?limit=100').then((r) => r.json())) as unknown[];
    const { result, console: messages, requests } = await runPage(withoutCors.api, withoutCors.key, true);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/^TypeError: Failed to fetch/) });
    expect(messages.join('\n')).toMatch(/has been blocked by CORS policy/);
    // It stopped at the first call: the list was attempted, nothing was created.
    expect(requests.filter((r) => r.startsWith('GET ') && r.includes('/v1/pets'))).toHaveLength(1);
    const after = (await withoutCors.request('/pets?limit=100').then((r) => r.json())) as unknown[];
    expect(after).toHaveLength(before.length);
  });

  it('the same page from an origin not in CORS_ORIGINS (localhost instead of 127.0.0.1): blocked', async () => {
    const other = pageOrigin.replace(HOST, 'localhost');
    const { result, console: messages } = await runPage(withCors.api, withCors.key, false, other);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/^TypeError: Failed to fetch/) });
    expect(messages.join('\n')).toMatch(/has been blocked by CORS policy/);
  });
});
