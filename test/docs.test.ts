/**
 * `npm run docs` as a reader gets it: the script builds dist/docs/index.html, headless Chromium
 * opens it from disk, and the page shows every operation, its parameters and the deprecation,
 * without a single request that leaves the file (no CDN, no fonts, no telemetry).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledSpecPath, docsPath, projectRoot } from '../src/paths.js';
import { startTestServer } from './support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = '/tmp/docs.png';
/** Where a self-contained page may load from: itself, and what it derives in memory. */
const LOCAL_SCHEMES = new Set(['file:', 'data:', 'blob:', 'about:']);

const operations = [
  { summary: 'List animals', parameters: [{ name: 'limit', in: 'query' }, { name: 'status', in: 'query' }, { name: 'cursor', in: 'query' }], deprecated: false },
  { summary: 'Add an animal', parameters: [], deprecated: false },
  { summary: 'Get an animal', parameters: [{ name: 'petId', in: 'path' }], deprecated: true },
] as const;

describe.skipIf(!existsSync(CHROMIUM))(`npm run docs, opened in headless Chromium (skipped: no browser at ${CHROMIUM})`, () => {
  let buildOutput = '';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const { stdout } = await promisify(execFile)(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/docs.ts'], { cwd: projectRoot });
    buildOutput = stdout;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-gpu'],
    });
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // The context sees the requests of the page and of its workers.
    context.on('request', (request) => requests.push(request.url()));
    context.on('weberror', (error) => pageErrors.push(error.error().message));
    // What the page's Content-Security-Policy blocked (a request, eval, a worker) breaks a feature.
    await context.exposeFunction('reportCspViolation', (what: string) => pageErrors.push(`CSP blocked ${what}`));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        (window as unknown as { reportCspViolation(what: string): void }).reportCspViolation(`${event.effectiveDirective} ${event.blockedURI}`);
      });
    });
    page = await context.newPage();
    page.on('websocket', (socket) => requests.push(socket.url()));
    await page.goto(pathToFileURL(docsPath).href, { waitUntil: 'load' });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('writes dist/docs/index.html and a copy of the contract, and says where', () => {
    expect(buildOutput).toContain('dist/docs/index.html');
    expect(readFileSync(join(projectRoot, 'dist', 'docs', 'openapi.json'), 'utf8')).toBe(readFileSync(bundledSpecPath, 'utf8'));
  });

  it('shows the API title', async () => {
    await page.getByRole('heading', { name: 'Animal Store API', level: 1 }).waitFor({ state: 'visible' });
  });

  for (const operation of operations) {
    it(`shows "${operation.summary}"${operation.parameters.length ? ` with ${operation.parameters.map((p) => p.name).join(', ')}` : ''}${operation.deprecated ? ', deprecated' : ''}`, async () => {
      // As a reader does: open the tag in the sidebar, then the operation.
      const tag = page.getByRole('link', { name: 'Pets', exact: true });
      const link = page.getByRole('link', { name: operation.summary });
      if (!(await link.first().isVisible())) await tag.click();
      await link.first().click();

      const heading = page.getByRole('heading', { name: operation.summary, level: 2 });
      await heading.waitFor({ state: 'visible' });
      const section = page.locator('[data-section-id]').filter({ has: heading });
      expect(await section.count()).toBe(1);

      for (const parameter of operation.parameters) {
        const row = section.locator(`[id$="t=request&in=${parameter.in}&path=${parameter.name.toLowerCase()}"]`);
        await row.waitFor({ state: 'visible' });
        expect(await row.innerText()).toContain(parameter.name);
      }

      // Redoc writes "deprecated" and capitalises it with CSS; innerText is what the reader sees.
      const badge = section.getByText(/^deprecated$/i);
      if (operation.deprecated) {
        await badge.first().waitFor({ state: 'visible' });
        expect(await badge.first().innerText()).toBe('Deprecated');
        await section.getByText(/removed on 5 December 2030/).waitFor({ state: 'visible' });
        await page.screenshot({ path: SCREENSHOT });
      } else {
        expect(await badge.count()).toBe(0);
      }
    });
  }

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(pageErrors).toEqual([]);
  });

  it('made no request beyond the file itself (file:, data:, blob:, about: only)', () => {
    // The page did load: the file itself is among the requests.
    expect(requests).toContain(pathToFileURL(docsPath).href);
    const remote = requests.filter((url) => !LOCAL_SCHEMES.has(/^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]?.toLowerCase() ?? ''));
    expect(remote).toEqual([]);
  });

  it("the server serves the same page at /docs, and it renders under the server's own CSP", async () => {
    const server = await startTestServer('sqlite');
    try {
      const response = await fetch(`${server.origin}/docs`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toBe(readFileSync(docsPath, 'utf8'));
      const before = pageErrors.length;
      const served = await context.newPage();
      await served.goto(`${server.origin}/docs`, { waitUntil: 'load' });
      await expect.poll(() => served.getByText('List animals').first().isVisible(), { timeout: 15_000 }).toBe(true);
      await served.close();
      expect(pageErrors.slice(before)).toEqual([]);
      const remote = requests.filter((url) => /^https?:/.test(url) && !url.startsWith(server.origin));
      expect(remote).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
