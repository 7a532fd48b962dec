/**
 * The docs of every contract version, and "Try it", as a reader uses them: `npm run docs` builds
 * the working contract, each release of spec/released/ and changes.html; headless Chromium opens
 * each page from disk and from a running server, follows the version menu's links, reads a known
 * change on the changes page, and sends calls from the Try it panel to the sandbox (`npm run
 * sandbox`, a child process) and to the server that serves the page, reading the pet's JSON from
 * the page. No request may leave this machine: every request the browser makes is recorded, and
 * any that is not local is refused and fails the test.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundledSpecPath, docsPath, projectRoot } from '../../src/shared/paths.js';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const docsDir = dirname(docsPath);
/** The releases, newest first, as the menu must list them. */
const releases = readdirSync(join(projectRoot, 'spec', 'released'))
  .filter((name) => /^\d+\.\d+\.\d+\.json$/.test(name))
  .map((name) => name.slice(0, -5))
  .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
const workingVersion = (JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as { info: { version: string } }).info.version;
const MENU = ['Working contract', ...releases, 'What changed'];

// Each test renders several Redoc pages of 2.5 MB; on a machine busy with other suites a render
// takes many times its quiet duration. The bounds are generous because nothing here is timed.
vi.setConfig({ testTimeout: 240_000 });

/** A local address: the file itself, what the page derives in memory, and this machine. */
function isLocal(url: string): boolean {
  const parsed = new URL(url);
  if (['file:', 'data:', 'blob:', 'about:'].includes(parsed.protocol)) return true;
  return ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
}

/** The menu's links as the reader sees them: text, and whether it is the current page. */
async function menu(page: Page): Promise<{ text: string; current: boolean; href: string }[]> {
  const links = page.locator('#docs-bar nav a');
  await links.first().waitFor({ state: 'visible' });
  return links.evaluateAll((anchors) => anchors.map((a) => ({ text: a.textContent ?? '', current: a.getAttribute('aria-current') === 'page', href: (a as HTMLAnchorElement).href })));
}

/** Waits until `page` shows the reference for `version`, or the changes page. */
async function rendered(page: Page, what: string): Promise<void> {
  if (what === 'What changed') {
    await page.getByRole('heading', { name: 'What changed in the contract', level: 1 }).waitFor({ state: 'visible' });
    return;
  }
  const version = what === 'Working contract' ? workingVersion : what;
  await page.getByRole('heading', { name: `Animal Store API (${version})`, level: 1 }).waitFor({ state: 'visible', timeout: 60_000 });
  // Redoc ran (hydrated): its sidebar lists the operations' tag.
  await page.getByRole('link', { name: 'Pets', exact: true }).first().waitFor({ state: 'visible' });
}

/** Opens the Try it panel and fills it for `operationId` with `fields` (field id → value), after `prepare` (a body type chosen, a file picked). */
async function tryIt(page: Page, operationId: string, key: string, fields: Record<string, string>, prepare: () => Promise<void> = async () => undefined): Promise<{ status: string; headers: string; body: string }> {
  if ((await page.locator('#try-it').getAttribute('hidden')) !== null) await page.getByRole('button', { name: 'Try it' }).click();
  await page.locator('#try-it-operation').selectOption(operationId);
  await page.locator('#try-it-key').fill(key);
  await prepare();
  for (const [id, value] of Object.entries(fields)) await page.locator(`#${id}`).fill(value);
  await page.locator('#try-it-send').click();
  const status = page.getByTestId('try-it-status');
  await expect.poll(() => status.getAttribute('data-outcome'), { timeout: 15_000 }).not.toBeNull();
  return { status: await status.innerText(), headers: await page.getByTestId('try-it-headers').innerText(), body: await page.getByTestId('try-it-body').innerText() };
}

describe.skipIf(!existsSync(CHROMIUM))(`docs per version, the changes page and Try it, in headless Chromium (skipped without a browser at ${CHROMIUM})`, () => {
  let browser: Browser;
  let context: BrowserContext;
  const requests: string[] = [];
  const refused: string[] = [];
  const pageErrors: string[] = [];
  const consoleLines: string[] = [];

  beforeAll(async () => {
    // The pages are built once for the suite (./support/buildDocs.ts).
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-gpu'],
    });
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    context.setDefaultTimeout(90_000);
    // Everything the pages and their workers ask for; anything not on this machine is refused.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      requests.push(url);
      if (isLocal(url)) await route.fallback();
      else {
        refused.push(url);
        await route.abort('blockedbyclient');
      }
    });
    context.on('weberror', (error) => pageErrors.push(error.error().message));
    await context.exposeFunction('reportCspViolation', (what: string) => pageErrors.push(`CSP blocked ${what}`));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        (window as unknown as { reportCspViolation(what: string): void }).reportCspViolation(`${event.effectiveDirective} ${event.blockedURI}`);
      });
    });
    context.on('console', (message) => consoleLines.push(message.text()));
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('writes a page per release, the working contract and changes.html, published and as the server serves them', () => {
    expect(releases.length).toBeGreaterThan(1);
    for (const dir of [docsDir, join(dirname(docsDir), 'docs-server')]) {
      for (const file of ['index.html', 'changes.html', ...releases.map((version) => join(version, 'index.html'))]) expect(existsSync(join(dir, file)), join(dir, file)).toBe(true);
    }
    for (const version of releases) {
      expect(readFileSync(join(docsDir, version, 'openapi.json'), 'utf8')).toBe(readFileSync(join(projectRoot, 'spec', 'released', `${version}.json`), 'utf8'));
    }
  });

  it("every published page renders from disk, reached by the menu's links alone (relative: the folder works wherever it is put), its menu (working contract, releases newest first, What changed) marking it", async () => {
    const page = await context.newPage();
    const fileOf = (what: string) => (what === 'Working contract' ? 'index.html' : what === 'What changed' ? 'changes.html' : join(what, 'index.html'));
    // From every page, every link names the right file.
    for (const start of MENU) {
      await page.goto(pathToFileURL(join(docsDir, fileOf(start))).href, { waitUntil: 'domcontentloaded' });
      expect((await menu(page)).map((link) => link.href), start).toEqual(MENU.map((target) => pathToFileURL(join(docsDir, fileOf(target))).href));
    }
    // A reader's tour by the menu alone: each page once, each kind of page as a start.
    await page.goto(pathToFileURL(docsPath).href, { waitUntil: 'load' });
    for (const target of [...MENU.slice(1), MENU[0]!]) {
      await page.locator('#docs-bar nav').getByRole('link', { name: target, exact: true }).click();
      await rendered(page, target);
      const links = await menu(page);
      expect(links.map((link) => link.text), target).toEqual(MENU);
      expect(links.filter((link) => link.current).map((link) => link.text), target).toEqual([target]);
    }
    await page.close();
  });

  it("the changes page lists 1.0.0 → 1.1.0 with listPets' new If-None-Match, linked to listPets on 1.1.0's page, and the newest release → working contract", async () => {
    const page = await context.newPage();
    await page.goto(pathToFileURL(join(docsDir, 'changes.html')).href, { waitUntil: 'load' });
    const steps = await page.locator('main h2').allInnerTexts();
    expect(steps[0]).toBe(`${releases[0]} → working contract`);
    expect(steps).toContain('1.0.0 → 1.1.0');
    const step = page.locator('section#from-1\\.0\\.0-to-1\\.1\\.0');
    const heading = step.locator('h3').filter({ hasText: /^listPets \(GET \/pets\)$/ });
    await heading.waitFor({ state: 'visible' });
    expect(await heading.locator('a').getAttribute('href')).toBe('1.1.0/index.html#tag/Pets/operation/listPets');
    const lines = heading.locator('xpath=following-sibling::ul[1]/li');
    const added = (await lines.allInnerTexts()).map((line) => line.replace(/\s+/g, ' ').trim()).filter((line) => /If-None-Match/.test(line));
    expect(added).toEqual([expect.stringMatching(/^added Added optional header parameter If-None-Match/i)]);
    expect(await lines.filter({ hasText: 'If-None-Match' }).locator('.kind').innerText()).toMatch(/^added$/i);
    // The operation's link opens 1.1.0's page at listPets. Opened at an operation, Redoc shows that
    // operation alone once it has hydrated (the info heading that rendered() waits for is gone by
    // then, sooner on a busy machine): the menu's current entry says which version this is.
    await heading.locator('a').click();
    await page.waitForURL(/\/1\.1\.0\/index\.html#/);
    await page.getByRole('heading', { name: 'List animals', level: 2 }).waitFor({ state: 'visible' });
    expect((await menu(page)).filter((link) => link.current).map((link) => link.text)).toEqual(['1.1.0']);
    await page.close();
  });

  describe('served by the API server', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer('sqlite');
    });
    afterAll(async () => {
      await server?.close();
    });

    it('serves the working page at /docs, /docs/ and /docs/index.html, each release at /docs/<x.y.z>/ (with or without the slash or index.html), and /docs/changes.html, under the docs CSP', async () => {
      const working = await (await fetch(`${server.origin}/docs`)).text();
      for (const path of ['/docs/', '/docs/index.html']) expect(await (await fetch(`${server.origin}${path}`)).text(), path).toBe(working);
      for (const version of releases) {
        const page = readFileSync(join(dirname(docsDir), 'docs-server', version, 'index.html'), 'utf8');
        for (const path of [`/docs/${version}/`, `/docs/${version}`, `/docs/${version}/index.html`]) {
          const response = await fetch(`${server.origin}${path}`);
          expect(response.status, path).toBe(200);
          expect(response.headers.get('content-security-policy'), path).toMatch(/connect-src 'self' http:\/\/localhost:\* http:\/\/127\.0\.0\.1:\*/);
          expect(await response.text(), path).toBe(page);
        }
      }
      const changes = await fetch(`${server.origin}/docs/changes.html`);
      expect(changes.status).toBe(200);
      expect(changes.headers.get('content-type')).toMatch(/^text\/html/);
      for (const path of ['/docs/9.9.9/', '/docs/latest', '/docs/..%2Fpackage.json', '/docs/1.0.0/../../package.json']) {
        expect((await fetch(`${server.origin}${path}`)).status, path).toBe(404);
      }
    });

    it("the served menu's links (absolute /docs paths) lead to pages that render", async () => {
      const page = await context.newPage();
      const pathOf = (what: string) => (what === 'Working contract' ? '/docs' : what === 'What changed' ? '/docs/changes.html' : `/docs/${what}/`);
      for (const start of MENU) {
        await page.goto(`${server.origin}${pathOf(start)}`, { waitUntil: 'domcontentloaded' });
        const hrefs = (await menu(page)).map((link) => link.href);
        expect(hrefs, start).toEqual(MENU.map((target) => `${server.origin}${pathOf(target)}`));
      }
      for (const target of MENU) expect((await fetch(`${server.origin}${pathOf(target)}`)).status, target).toBe(200);
      await page.goto(`${server.origin}/docs`, { waitUntil: 'load' });
      for (const target of [...MENU.slice(1), MENU[0]!]) {
        await page.locator('#docs-bar nav').getByRole('link', { name: target, exact: true }).click();
        await rendered(page, target);
        expect(new URL(page.url()).origin).toBe(server.origin);
        expect((await menu(page)).find((link) => link.current)?.text).toBe(target);
      }
      await page.close();
    });

    it('Try it on a served page starts on the operation in the address, calls this server (same origin) with its key and shows the answer; a wrong key shows the 401', async () => {
      const created = await server.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Served Biscuit', categoryId: 2 }) });
      const pet = (await created.json()) as { id: number };
      const page = await context.newPage();
      // Opened at an operation (the deprecation Link's address), the panel starts on it.
      await page.goto(`${server.origin}/docs#tag/Pets/operation/getPet`, { waitUntil: 'load' });
      await page.getByRole('heading', { name: 'Get an animal', level: 2 }).waitFor({ state: 'visible', timeout: 60_000 });
      await page.getByRole('button', { name: 'Try it' }).click();
      expect(await page.locator('#try-it-operation').inputValue()).toBe('getPet');
      expect(await page.locator('#try-it-server-this').isChecked()).toBe(true);
      const answer = await tryIt(page, 'getPet', server.key, { 'try-it-path-petId': String(pet.id) });
      expect(answer.status).toBe('200 OK');
      expect(JSON.parse(answer.body)).toEqual({ id: pet.id, name: 'Served Biscuit', categoryId: 2, status: 'available' });
      expect(answer.headers).toMatch(/^etag: "/m);
      expect(answer.headers).toMatch(/^deprecation: /m);
      const refusedAnswer = await tryIt(page, 'listPets', 'ask_not-a-key', {});
      expect(refusedAnswer.status).toBe('401 Unauthorized');
      expect(JSON.parse(refusedAnswer.body)).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(page.url()).not.toContain(server.key);
      await page.close();
    });

    it('Try it sends a file as putPetPhoto\'s body (the media type chosen), a form with a photo file as createPet\'s, and describes the image answered', async () => {
      const created = await server.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Photographed', categoryId: 2 }) });
      const pet = (await created.json()) as { id: number };
      const png = join(projectRoot, 'spec', 'examples', 'biscuit.png');
      const page = await context.newPage();
      await page.goto(`${server.origin}/docs#tag/Pets/operation/putPetPhoto`, { waitUntil: 'load' });
      await page.getByRole('button', { name: 'Try it' }).click();
      const stored = await tryIt(page, 'putPetPhoto', server.key, { 'try-it-path-petId': String(pet.id) }, async () => {
        expect(await page.locator('#try-it-body-type option').allInnerTexts()).toEqual(['image/png', 'image/jpeg', 'image/webp']);
        await page.locator('#try-it-request-file').setInputFiles(png);
      });
      expect(stored.status).toBe('204 No Content');
      const photo = await tryIt(page, 'getPetPhoto', server.key, { 'try-it-path-petId': String(pet.id) });
      expect(photo.status).toBe('200 OK');
      expect(photo.body).toBe(`(${readFileSync(png).length} bytes of image/png)`);
      const form = await tryIt(page, 'createPet', server.key, { 'try-it-form-name': 'From a form', 'try-it-form-categoryId': '3' }, async () => {
        await page.locator('#try-it-body-type').selectOption('multipart/form-data');
        await page.locator('#try-it-form-photo').setInputFiles(png);
      });
      expect(form.status).toBe('201 Created');
      const formed = JSON.parse(form.body) as { id: number; name: string };
      expect(formed.name).toBe('From a form');
      expect((await server.request(`/pets/${formed.id}/photo`)).headers.get('content-type')).toBe('image/png');
      await page.close();
    });
  });

  describe('against the sandbox (npm run sandbox)', () => {
    let sandbox: RunningProcess;
    let base: string;
    beforeAll(async () => {
      const port = await freePort('127.0.0.1');
      base = `http://127.0.0.1:${port}/v1`;
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const name of ['NODE_ENV', 'DATABASE_URL', 'LOG_LEVEL']) delete env[name];
      sandbox = startProcess('npm', ['run', '-s', 'sandbox', '--', '--port', String(port)], { cwd: projectRoot, env });
      await waitForHttp(`${base}/pets`, sandbox);
    });
    afterAll(async () => {
      if (sandbox?.running()) await stopProcess(sandbox);
    });

    it("Try it on the published page (opened from disk) sends getPet to the sandbox with its key and shows the pet's JSON, status and headers", async () => {
      const seeded = (await (await fetch(`${base}/pets/1`, { headers: { Authorization: 'Bearer sandbox' } })).json()) as { id: number; name: string };
      const page = await context.newPage();
      await page.goto(pathToFileURL(docsPath).href, { waitUntil: 'load' });
      await rendered(page, 'Working contract');
      await page.getByRole('button', { name: 'Try it' }).click();
      // Opened from disk there is no "this server": the sandbox is the choice.
      expect(await page.locator('#try-it-server-this').count()).toBe(0);
      expect(await page.locator('#try-it-server-sandbox').isChecked()).toBe(true);
      await page.locator('#try-it-sandbox-url').fill(base);
      const answer = await tryIt(page, 'getPet', 'sandbox', { 'try-it-path-petId': '1' });
      expect(answer.status).toBe('200 OK');
      expect(JSON.parse(answer.body)).toEqual(seeded);
      expect(seeded.id).toBe(1);
      // What the sandbox exposes to a page of another origin (the file's "null" origin here).
      expect(answer.headers).toMatch(/^etag: "/m);
      expect(answer.headers).toMatch(/^deprecation: /m);
      expect(await page.getByTestId('try-it-request').innerText()).toBe(`GET ${base}/pets/1\nauthorization: Bearer ••••••`);

      // A create with the example body, then a list that has it.
      const created = await tryIt(page, 'createPet', 'sandbox', {});
      expect(created.status).toBe('201 Created');
      const pet = JSON.parse(created.body) as { id: number; name: string };
      const list = await tryIt(page, 'listPets', 'sandbox', { 'try-it-query-limit': '100' });
      expect((JSON.parse(list.body) as { id: number }[]).map((p) => p.id)).toContain(pet.id);

      // The key: in this tab's sessionStorage, never in the address or the console.
      expect(await page.evaluate(() => sessionStorage.getItem('animal-store-docs.key.sandbox'))).toBe('sandbox');
      expect(page.url()).toBe(pathToFileURL(docsPath).href);
      expect(consoleLines.filter((line) => line.includes('Bearer'))).toEqual([]);
      await page.close();
    });

    it('Try it shows the real 401 for a wrong key, and refuses a sandbox address off this machine without sending anything', async () => {
      const page = await context.newPage();
      await page.goto(pathToFileURL(docsPath).href, { waitUntil: 'load' });
      await rendered(page, 'Working contract');
      await page.getByRole('button', { name: 'Try it' }).click();
      await page.locator('#try-it-sandbox-url').fill(base);
      const wrong = await tryIt(page, 'listPets', 'not-the-key', {});
      expect(wrong.status).toBe('401 Unauthorized');
      expect(JSON.parse(wrong.body)).toMatchObject({ status: 401 });
      const before = requests.length;
      await page.locator('#try-it-sandbox-url').fill('https://api.animal-store.example/v1');
      const off = await tryIt(page, 'listPets', 'sandbox', {});
      expect(off.status).toMatch(/^The sandbox runs on this machine/);
      expect(requests.slice(before).filter((url) => url.startsWith('http'))).toEqual([]);
      await page.close();
    });
  });

  it('ran without script errors or CSP violations, and no request left this machine', () => {
    expect(pageErrors).toEqual([]);
    expect(refused).toEqual([]);
    expect(requests.filter((url) => !isLocal(url))).toEqual([]);
    expect(requests.some((url) => url.startsWith('http://127.0.0.1:'))).toBe(true);
  });
});
