/**
 * `npm run docs` as a reader gets it: the script builds dist/docs/index.html, headless Chromium
 * opens it from disk, and the page shows every operation, its parameters and the deprecation,
 * without a single request that leaves the file (no CDN, no fonts, no telemetry). Its search
 * finds an operation by its operationId; the published page lists production and staging only,
 * and the page a running server serves at /docs lists that server first. A deprecated operation's
 * section opens with its sunset date, replacement and brownout policy, and the deprecation Link of
 * its answers opens the page at it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundledSpecPath, docsPath, projectRoot, SERVED_ORIGIN_PLACEHOLDER, servedDocsPath } from '../../src/shared/paths.js';
import { startTestServer } from '../support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = '/tmp/docs.png';
/** Where a self-contained page may load from: itself, and what it derives in memory. */
const LOCAL_SCHEMES = new Set(['file:', 'data:', 'blob:', 'about:']);

const operations = [
  { summary: 'List animals', parameters: [{ name: 'limit', in: 'query' }, { name: 'status', in: 'query' }, { name: 'cursor', in: 'query' }], deprecated: false },
  { summary: 'Add an animal', parameters: [], deprecated: false },
  { summary: 'Get an animal', parameters: [{ name: 'petId', in: 'path' }], deprecated: true },
] as const;

const PRODUCTION = 'https://api.animal-store.example/v1';
const STAGING = 'https://staging.api.animal-store.example/v1';

/** The server URLs of Redoc's Servers panel, in the order the reader sees them. */
async function serversPanel(page: Page): Promise<string[]> {
  const panel = page.locator('[data-testid="panel-servers"]');
  await panel.waitFor({ state: 'visible' });
  return (await panel.innerText()).split('\n').filter((line) => /^https?:\/\//.test(line));
}

/** As a reader does: open the operation's tag in the sidebar (its first, as Redoc files it), then the operation; its section. */
async function openOperation(page: Page, summary: string, tag = 'Pets'): Promise<Locator> {
  const link = page.getByRole('link', { name: summary });
  if (!(await link.first().isVisible())) await page.getByRole('link', { name: tag, exact: true }).click();
  await link.first().click();
  const heading = page.getByRole('heading', { name: summary, level: 2 });
  await heading.waitFor({ state: 'visible' });
  return page.locator('[data-section-id]').filter({ has: heading });
}

interface SpecOperation {
  operationId: string;
  summary: string;
  tags?: string[];
  deprecated?: boolean;
  'x-sunset'?: string;
  'x-replacement'?: string;
}

/** Every operation of the bundled contract, with the markers the docs derive the notice from. */
function specOperations(): SpecOperation[] {
  const spec = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.values(spec.paths).flatMap((item) => Object.values(item).filter((op): op is SpecOperation => typeof op === 'object' && op !== null && 'operationId' in op));
}

/** Types `query` into Redoc's search (opened from the sidebar) and returns the results' texts. */
async function search(page: Page, query: string): Promise<string[]> {
  const input = page.getByPlaceholder('Search docs...');
  // The sidebar's "Search Ctrl+K" box: the element that holds the search icon.
  if (!(await input.isVisible())) await page.locator('[data-component-name="icons/SearchIcon/SearchIcon"]').first().locator('xpath=..').click();
  await input.fill(query);
  const results = page.locator('[data-component-name="Search/SearchItem"]');
  await results.first().waitFor({ state: 'visible', timeout: 10_000 }).catch(() => undefined);
  return results.allInnerTexts();
}

/** GET /docs with this Host header (fetch cannot set Host). */
function docsWithHost(origin: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/docs`, { headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(!existsSync(CHROMIUM))(`npm run docs, opened in headless Chromium (skipped without a browser at ${CHROMIUM})`, () => {
  let buildOutput = '';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // Built once for the suite (./support/buildDocs.ts).
    buildOutput = inject('docsBuildOutput');
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

  it('the published page lists production and staging in its Servers panel, nothing else', async () => {
    expect(await serversPanel(page)).toEqual([PRODUCTION, STAGING]);
    expect(readFileSync(docsPath, 'utf8')).not.toContain(SERVED_ORIGIN_PLACEHOLDER);
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

  it("each deprecated operation's description opens with its sunset date, its replacement and the brownout policy; the others have no notice", async () => {
    const all = specOperations();
    expect(all.filter((op) => op.deprecated).map((op) => op.operationId)).toContain('getPet');
    for (const op of all) {
      const section = await openOperation(page, op.summary, op.tags?.[0]);
      const notice = section.locator('blockquote').filter({ hasText: 'Deprecated' });
      if (!op.deprecated) {
        expect(await notice.count(), op.operationId).toBe(0);
        continue;
      }
      await notice.waitFor({ state: 'visible', timeout: 5_000 });
      // Redoc may render the section again as it scrolls there: read the notice once it holds its text.
      await expect.poll(() => notice.innerText(), { timeout: 10_000 }).toContain(`Removed on ${op['x-sunset']?.slice(0, 10)}: from then on it answers 410 Gone.`);
      const text = await notice.innerText();
      expect(text).toContain(`Use ${op['x-replacement']} instead.`);
      expect(text).toMatch(/brownouts: windows in which it answers 410 Gone \(code operation_brownout\)/);
      // At the top of the description: before the spec's own text.
      const description = await section.locator('[data-component-name="Markdown/Markdown"]').allInnerTexts();
      expect(description[0], op.operationId).toBe(text);
    }
    // The sidebar's click scrolls while Redoc re-renders: read the notice once it is shown, as the loop does.
    const getPetNotice = (await openOperation(page, 'Get an animal')).locator('blockquote').filter({ hasText: 'Deprecated' }).first();
    await getPetNotice.waitFor({ state: 'visible', timeout: 5_000 });
    expect(await getPetNotice.innerText()).toBe(
      'Deprecated since 2026-11-21. Removed on 2030-12-05: from then on it answers 410 Gone. Use GET /pets with the status filter instead. ' +
        'Before that date, the service may announce brownouts: windows in which it answers 410 Gone (code operation_brownout) so that callers notice.',
    );
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(pageErrors).toEqual([]);
  });

  it('made no request beyond the file itself (file:, data:, blob:, about: only)', () => {
    // The page did load: the file itself is among the requests.
    expect(requests).toContain(pathToFileURL(docsPath).href);
    const remote = requests.filter((url) => !LOCAL_SCHEMES.has(/^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]?.toLowerCase() ?? ''));
    expect(remote).toEqual([]);
  });

  // "create" also finds the petCreated webhook (its section opens with the POST it is sent as),
  // so only the operationId must put createPet first.
  it('search finds "Add an animal" (POST /pets) first by its operationId, "createPet", and among the results for "create"', async () => {
    const addAnAnimal = /^POST\s+\/pets\s+Add an animal/;
    const byId = await search(page, 'createPet');
    expect(byId[0], 'first result for "createPet"').toMatch(addAnAnimal);
    const byWord = await search(page, 'create');
    expect(byWord.some((result) => addAnAnimal.test(result)), `results for "create": ${JSON.stringify(byWord)}`).toBe(true);
    await page.keyboard.press('Escape');
  });

  it("the server serves the page at /docs with its own address first in the Servers panel, under the server's own CSP", async () => {
    const server = await startTestServer('sqlite');
    try {
      const response = await fetch(`${server.origin}/docs`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toBe(readFileSync(servedDocsPath(docsPath), 'utf8').replaceAll(SERVED_ORIGIN_PLACEHOLDER, server.origin));
      const before = pageErrors.length;
      const served = await context.newPage();
      // Any error React or Redoc logs counts as a page error too.
      served.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
      });
      await served.goto(`${server.origin}/docs`, { waitUntil: 'load' });
      await expect.poll(() => served.getByText('List animals').first().isVisible(), { timeout: 15_000 }).toBe(true);
      expect(await serversPanel(served)).toEqual([`${server.origin}/v1`, PRODUCTION, STAGING]);
      expect((await search(served, 'createPet'))[0]).toMatch(/^POST\s+\/pets\s+Add an animal/);
      await served.close();
      expect(pageErrors.slice(before)).toEqual([]);
      const remote = requests.filter((url) => /^https?:/.test(url) && !url.startsWith(server.origin));
      expect(remote).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("the Link rel=\"deprecation\" of getPet's answers opens the served page at getPet (its section on top, selected in the sidebar)", async () => {
    const server = await startTestServer('sqlite');
    try {
      const answer = await fetch(`${server.api}/pets/1`, { headers: { Authorization: `Bearer ${server.key}` } });
      const target = /^<([^>]+)>; rel="deprecation"/.exec(answer.headers.get('link') ?? '')?.[1];
      expect(target).toBe('/docs#tag/Pets/operation/getPet');
      const before = pageErrors.length;
      const reader = await context.newPage();
      reader.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
      });
      /** The heading of the section at the top of the window, and the sidebar's selected item (each with its badges). */
      const shown = () =>
        reader.evaluate(() => ({
          top: Array.from(document.querySelectorAll('[data-section-id]')).find((section) => Math.abs(section.getBoundingClientRect().top) < 50)?.querySelector('h2')?.textContent ?? null,
          selected: document.querySelector('[data-testid="menu-item-label"][data-active="true"]')?.textContent ?? null,
        }));
      await reader.goto(new URL(target ?? '', answer.url).href, { waitUntil: 'load' });
      await expect.poll(shown, { timeout: 15_000 }).toEqual({ top: expect.stringMatching(/^Get an animal/), selected: expect.stringMatching(/^Get an animal/) });
      // Redoc 3 rewrites the anchor into its own form; the old form is what it still resolves.
      expect(new URL(reader.url()).hash).toBe('#/pets/getpet');
      // The control: the anchor decides where the page opens.
      await reader.goto('about:blank');
      await reader.goto(`${server.origin}/docs#tag/Pets/operation/listPets`, { waitUntil: 'load' });
      await expect.poll(shown, { timeout: 15_000 }).toEqual({ top: expect.stringMatching(/^List animals/), selected: expect.stringMatching(/^List animals/) });
      await reader.close();
      expect(pageErrors.slice(before)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('the served page names the Host the browser used when it is a plain host[:port], and the local address otherwise', async () => {
    const server = await startTestServer('sqlite');
    try {
      const local = `${server.origin}/v1`;
      expect(await docsWithHost(server.origin, 'docs.animal-store.example:8080')).toContain('"servers":[{"url":"http://docs.animal-store.example:8080/v1"');
      expect(await docsWithHost(server.origin, 'LocalHost:9')).toContain('"servers":[{"url":"http://localhost:9/v1"');
      for (const host of ['evil.example"><script>alert(1)</script>', 'evil.example/path', 'user@evil.example', 'evil.example:8080:1', '']) {
        const body = await docsWithHost(server.origin, host);
        expect(body, `Host: ${host}`).toContain(`"servers":[{"url":"${local}"`);
        expect(body, `Host: ${host}`).not.toContain('evil.example');
      }
    } finally {
      await server.close();
    }
  });
});
