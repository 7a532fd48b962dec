/**
 * The client package in a browser (issue 40): `npm run build:client`'s tarball installed into an
 * empty project outside this repository, a page of that project importing `@animal-store/client`,
 * bundled for the browser by esbuild from the project's own node_modules, served from its own
 * origin, and run in headless Chromium against the sandbox (`npm run sandbox`) on another origin,
 * as a frontend team first meets the API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { SANDBOX_TOKEN } from '../../src/features/sandbox/token.js';
import { projectRoot } from '../../src/shared/paths.js';
import { consumerWithTarball, LIST_PETS_APP, type Consumer } from '../support/clientConsumer.js';

const CHROMIUM = '/usr/bin/chromium';
const HOST = '127.0.0.1';

/** The team's page: the shared listPets app, then a create and a read-back, by operationId. */
const PAGE = `${LIST_PETS_APP}
import { createAnimalStoreClient as create } from '@animal-store/client';

async function scenario(baseUrl: string, apiKey: string) {
  const api = create({ baseUrl, apiKey });
  const first = await listPets(baseUrl, apiKey);
  const created = await api.createPet({ body: { name: 'Biscuit', categoryId: 2 } });
  const back = created.data ? await api.getPet({ params: { path: { petId: created.data.id } } }) : undefined;
  return { first, created: { status: created.response.status, location: created.headers.location ?? null, id: created.data?.id ?? null }, back: back?.data?.name ?? null, sunset: back?.data ? back.headers.sunset.toISOString() : null };
}
(window as unknown as { scenario: typeof scenario }).scenario = scenario;
`;

describe.skipIf(!existsSync(CHROMIUM))(`the installed package, bundled by esbuild, in headless Chromium against the sandbox (skipped without a browser at ${CHROMIUM})`, () => {
  let consumer: Consumer;
  let sandbox: RunningProcess;
  let sandboxBase: string;
  let pageServer: Server;
  let pageOrigin: string;
  let browser: Browser;

  beforeAll(async () => {
    const sandboxPort = await freePort(HOST);
    sandboxBase = `http://${HOST}:${sandboxPort}/v1`;
    const sandboxEnv = { ...process.env };
    delete sandboxEnv.DATABASE_URL;
    sandbox = startProcess('npm', ['run', '-s', 'sandbox', '--', '--host', HOST, '--port', String(sandboxPort)], { cwd: projectRoot, env: sandboxEnv });
    consumer = await consumerWithTarball('animal-store-browser-consumer');
    writeFileSync(join(consumer.dir, 'page.ts'), PAGE);
    const bundle = await build({ absWorkingDir: consumer.dir, entryPoints: ['page.ts'], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'chrome120', write: false, logLevel: 'silent' });
    const script = bundle.outputFiles[0]?.contents;
    if (!script) throw new Error('esbuild produced no bundle');
    const html = '<!doctype html><meta charset="utf-8"><title>A team\'s page</title><script type="module" src="/page.js"></script>';
    pageServer = createServer((req, res) => {
      if (req.url === '/page.js') res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(script);
      else if (req.url === '/') res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => pageServer.listen(0, HOST, resolve));
    pageOrigin = `http://${HOST}:${(pageServer.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
    await waitForHttp(`${sandboxBase}/pets`, sandbox);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (sandbox) await stopProcess(sandbox);
    await new Promise((resolve) => (pageServer ? pageServer.close(resolve) : resolve(undefined)));
    consumer?.remove();
  });

  it('lists the seeded pets with their ETag and next cursor, creates one and reads it back (deprecated getPet, its Sunset a Date), from another origin', async () => {
    expect(new URL(pageOrigin).origin).not.toBe(new URL(sandboxBase).origin);
    const context = await browser.newContext();
    const page = await context.newPage();
    const messages: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    page.on('pageerror', (error) => messages.push(String(error)));
    try {
      await page.goto(`${pageOrigin}/`, { waitUntil: 'load' });
      await page.waitForFunction(() => 'scenario' in window);
      const result = await page.evaluate(
        ([url, key]) => (window as unknown as { scenario(u: string, k: string): Promise<unknown> }).scenario(url, key),
        [sandboxBase, SANDBOX_TOKEN] as const,
      );
      expect(result, messages.join('\n')).toMatchObject({
        first: { status: 200, names: expect.arrayContaining([expect.any(String)]), etag: expect.stringMatching(/^"/), next: expect.any(String) },
        created: { status: 201, location: expect.stringMatching(/^\/v1\/pets\/\d+$/), id: expect.any(Number) },
        back: 'Biscuit',
        sunset: '2030-12-05T00:00:00.000Z',
      });
      expect((result as { first: { names: string[] } }).first.names).toHaveLength(2);
      expect(messages.filter((m) => /CORS|Error/i.test(m))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
