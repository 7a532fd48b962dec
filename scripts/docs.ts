/**
 * `npm run docs`: the API reference for every contract version, self-contained, for publishing or
 * opening offline.
 *
 *   dist/docs/index.html            the working contract (generated/openapi.json)
 *   dist/docs/<x.y.z>/index.html    each release (spec/released/<x.y.z>.json), with its openapi.json
 *   dist/docs/changes.html          what changed from each release to the next, and from the newest
 *                                   release to the working contract
 *                                   (scripts/lib/contract/contractChanges.ts)
 *   dist/docs/openapi.json          the working contract, offered for download
 *   dist/docs/CHANGELOG.md          the contract's changelog (spec/CHANGELOG.md), published with it
 *   dist/docs-server/               the same pages as the server serves them under /docs: absolute
 *                                   /docs links, "Try it" offers the serving server, and the working
 *                                   page lists one more server first, whose URL src/http/express.ts
 *                                   replaces with its own (SERVED_ORIGIN_PLACEHOLDER)
 *
 * Every page has the version bar (scripts/lib/docs/docsMenu.ts); the reference pages have the "Try
 * it" panel (scripts/lib/docs/docsTryIt*.ts). No page makes a network request when opened: how
 * Redoc is inlined and sealed is in scripts/lib/docs/docsPage.ts, and this script refuses to write
 * a page that would still load something from afar.
 *
 * The server's working page is rendered by Redoc itself with the placeholder server: Redoc renders
 * the page ahead (server-side) and then hydrates it from the definition embedded in the last
 * <script>, so the server's URL must be in both alike (React keeps the pre-rendered text when they
 * differ); the placeholder is rendered into the panel's HTML and the definition's JSON, and the
 * server replaces it as a plain string. The served release pages are their published renders with
 * the served bar and panel: no second render.
 *
 * Redocly renders the versions side by side, a few at a time (each is a process of its own), and
 * each render is kept in dist/.docs-cache/ by content hash: a release is rendered once, then only
 * the working contract when it changes. Measured on the 2-core machine while other work kept its
 * load average between 4 and 9 (so noisy), for today's 2 releases (4 renders): one render at a
 * time 5.2-5.5 s, side by side 3.6-3.7 s (6.4 s at the busiest); with the releases cached and
 * the working contract changed 2.2-4.0 s; nothing changed 1.6 s. Before versions and the panel,
 * the 2 renders of the working contract alone took 2.0 s on an idle machine.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundledSpecPath, docsPath, projectRoot, SERVED_ORIGIN_PLACEHOLDER, servedDocsPath } from '../src/shared/paths.js';
import { commandLine, fail } from './lib/commandLine.js';
import { contractChanges } from './lib/contract/contractChanges.js';
import { releasesIn, type Release } from './lib/contract/releases.js';
import { changesPageHtml, operationAnchors, type ChangeStep, type StepEnd } from './lib/docs/docsChanges.js';
import { docsDocument, type DocsDocument } from './lib/docs/docsContract.js';
import { barHtml, type DocsPageId, type DocsVariant } from './lib/docs/docsMenu.js';
import { dressReferencePage, pruneRenderCache, remoteResources, renderRedoc, tryItPanelScript, writeAtomically } from './lib/docs/docsPage.js';
import { basePathOf, SANDBOX_BASE_URL, tryItOperations, type TryItConfig } from './lib/docs/docsTryIt.js';

const HELP = `Usage: npm run docs

Builds the API reference (run \`npm run generate\` first when the spec changed) into dist/docs/:
index.html for the working contract (generated/openapi.json), <x.y.z>/index.html for each release
in spec/released/, and changes.html, what changed from each release to the next and from the
newest release to the working contract. Every page has a version menu and makes no network
request when opened; the reference pages have a "Try it" panel that calls the server serving the
page or a sandbox on this machine (npm run sandbox). Also copies the contract to
dist/docs/openapi.json and its changelog (spec/CHANGELOG.md) to dist/docs/CHANGELOG.md: the
folder to publish. dist/docs-server/ holds the same pages as the server serves them under /docs.

  --help   show this text`;

commandLine(HELP);

const root = projectRoot;
const rel = (file: string) => relative(root, file);
const started = performance.now();
const changelogPath = join(root, 'spec', 'CHANGELOG.md');
const releasedDir = join(root, 'spec', 'released');
const publishedDir = dirname(docsPath);
const servedDir = dirname(servedDocsPath(docsPath));
const VERSION_FOLDER = /^\d+\.\d+\.\d+$/;
/** Redoc's pages by content hash (scripts/lib/docs/docsPage.ts): a release is rendered once. */
const cacheDir = join(root, 'dist', '.docs-cache');

if (!existsSync(bundledSpecPath)) fail(`${rel(bundledSpecPath)} is missing: run \`npm run generate\` first.`);
if (!existsSync(changelogPath)) fail(`${rel(changelogPath)} is missing: the docs publish the contract's changelog.`);

/** Runs `tasks` at most `limit` at a time; the results in the tasks' order. */
async function inTurns<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Removes version folders of `dir` that no release has any more (a release file deleted or renamed). */
function removeStaleVersions(dir: string, releases: readonly Release[]): void {
  if (!existsSync(dir)) return;
  const kept = new Set(releases.map((release) => release.version));
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && VERSION_FOLDER.test(entry.name) && !kept.has(entry.name)) rmSync(join(dir, entry.name), { recursive: true, force: true });
  }
}

interface Contract {
  page: DocsPageId;
  label: string;
  /** The bundled contract's file. */
  file: string;
  /** As parsed, for the panel and the anchors. */
  raw: unknown;
}

const releases = releasesIn(releasedDir);
const versions = releases.map((release) => release.version);
const working: Contract = { page: { kind: 'working' }, label: 'working contract', file: bundledSpecPath, raw: JSON.parse(readFileSync(bundledSpecPath, 'utf8')) };
const released: Contract[] = releases.map((release) => ({ page: { kind: 'release', version: release.version }, label: release.version, file: release.file, raw: JSON.parse(readFileSync(release.file, 'utf8')) }));

/** Where a page of `variant` goes. */
function pageFile(page: DocsPageId, variant: DocsVariant): string {
  const dir = variant === 'published' ? publishedDir : servedDir;
  if (page.kind === 'working') return join(dir, 'index.html');
  if (page.kind === 'release') return join(dir, page.version, 'index.html');
  return join(dir, 'changes.html');
}

function tryItConfig(contract: Contract, variant: DocsVariant): TryItConfig {
  return { basePath: basePathOf(contract.raw), sameOrigin: variant === 'served', sandbox: SANDBOX_BASE_URL, operations: tryItOperations(contract.raw) };
}

/** The steps of the changes page, newest first: newest release → working contract, then each release → the next. */
async function changeSteps(): Promise<ChangeStep[]> {
  const chain = [...released].reverse();
  if (chain.length === 0) return [];
  chain.push(working);
  const end = (contract: Contract): StepEnd => ({ page: contract.page, label: contract.label, anchors: operationAnchors(contract.raw) });
  const pairs = chain.slice(1).map((to, index) => ({ from: chain[index]!, to }));
  const steps = await Promise.all(pairs.map(async ({ from, to }) => ({ from: end(from), to: end(to), groups: await contractChanges(from.file, to.file) })));
  return steps.reverse();
}

const files = new Map<string, string>();
let cachedRenders = 0;
try {
  const published = (contract: Contract): DocsDocument => docsDocument(readFileSync(contract.file, 'utf8'));
  const workingDocument = published(working);
  const servedWorking: DocsDocument = {
    ...workingDocument,
    servers: [{ url: `${SERVED_ORIGIN_PLACEHOLDER}/v1`, description: 'This server (the one showing these docs)' }, ...(workingDocument.servers ?? [])],
  };
  const documents = [workingDocument, servedWorking, ...released.map(published)];
  const renders = documents.map((document) => () => renderRedoc(document, cacheDir));
  const [rendered, steps, script] = await Promise.all([inTurns(renders, Math.max(2, availableParallelism())), changeSteps(), tryItPanelScript()]);
  pruneRenderCache(cacheDir, new Set(rendered.map((page) => page.entry)));
  cachedRenders = rendered.filter((page) => page.cached).length;
  const [workingHtml, servedWorkingHtml, ...releaseHtml] = rendered.map((page) => page.html) as [string, string, ...string[]];

  for (const variant of ['published', 'served'] as const) {
    const reference = (contract: Contract, html: string) => files.set(pageFile(contract.page, variant), dressReferencePage(html, barHtml(contract.page, versions, variant, true), tryItConfig(contract, variant), script));
    reference(working, variant === 'published' ? workingHtml : servedWorkingHtml);
    released.forEach((contract, index) => reference(contract, releaseHtml[index]!));
    files.set(pageFile({ kind: 'changes' }, variant), changesPageHtml(barHtml({ kind: 'changes' }, versions, variant, false), steps, variant, variant === 'published' ? 'CHANGELOG.md' : undefined));
  }
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const remote = [...files].flatMap(([file, html]) => remoteResources(html).map((found) => `${rel(file)}: ${found}`));
if (remote.length > 0) fail(`A page would still load remote resources:\n  ${remote.join('\n  ')}`);
const servedPath = servedDocsPath(docsPath);
const placeholderAt = [...files].filter(([, html]) => html.includes(SERVED_ORIGIN_PLACEHOLDER)).map(([file]) => file);
if (placeholderAt.length !== 1 || placeholderAt[0] !== servedPath) fail(`Only the server's working page (${rel(servedPath)}) may list ${SERVED_ORIGIN_PLACEHOLDER}; it is in: ${placeholderAt.map(rel).join(', ') || 'none'}.`);

removeStaleVersions(publishedDir, releases);
removeStaleVersions(servedDir, releases);
for (const [file, html] of files) writeAtomically(file, html);
const specCopy = join(publishedDir, 'openapi.json');
const changelogCopy = join(publishedDir, 'CHANGELOG.md');
writeAtomically(specCopy, readFileSync(bundledSpecPath));
writeAtomically(changelogCopy, readFileSync(changelogPath));
for (const release of releases) writeAtomically(join(publishedDir, release.version, 'openapi.json'), readFileSync(release.file));

const seconds = ((performance.now() - started) / 1000).toFixed(1);
const size = Math.ceil(Buffer.byteLength(files.get(docsPath) ?? '') / 1024);
console.log(`Docs: ${rel(docsPath)} (${size} KiB, self-contained), the working contract`);
for (const release of releases) console.log(`      ${rel(pageFile({ kind: 'release', version: release.version }, 'published'))}, release ${release.version}`);
console.log(`      ${rel(pageFile({ kind: 'changes' }, 'published'))}, what changed from each release to the next`);
console.log(`Spec: ${rel(specCopy)}`);
console.log(`Changelog: ${rel(changelogCopy)}`);
console.log(`Served under GET /docs: ${rel(servedDir)}/ (this server listed first, links under /docs)`);
console.log(`Built ${files.size} pages in ${seconds} s (${cachedRenders} of ${released.length + 2} Redoc renders from dist/.docs-cache). Open ${pathToFileURL(docsPath).href}, or GET /docs on a running server.`);
