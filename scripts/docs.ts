/**
 * `npm run docs`: the API reference as one self-contained page, for publishing or opening offline.
 *
 *   dist/docs/index.html    Redoc page from generated/openapi.json (redocly build-docs --inlineBundle)
 *   dist/docs/openapi.json  the bundled contract, offered for download next to it
 *   dist/docs/CHANGELOG.md  the contract's changelog (spec/CHANGELOG.md), published with it
 *   dist/docs-server/index.html  the page the server serves at GET /docs: the same, with one more
 *                           server listed first, whose URL src/http/web.ts replaces with its own
 *                           (SERVED_ORIGIN_PLACEHOLDER); not part of the published folder
 *
 * The page must make no network request when opened. `--inlineBundle` embeds Redoc itself
 * (without it the page loads Redoc from a CDN); Redoc's own telemetry is off because
 * redocly.yaml says `telemetry: off` (build-docs then writes `disableTelemetry: true` into the
 * page). What remains is patched here, and a Content-Security-Policy in the page blocks anything
 * remote that a later Redoc version might add:
 *
 *   - the "API docs by Redocly" badge loads its logo from cdn.redoc.ly: replaced by an inline SVG
 *   - CSP: scripts, styles, images, fonts and workers only inline, data: or blob:; no fetch at all
 *
 * Both pages are rendered from a copy of the contract in which every operation's description
 * ends with its operationId: Redoc 3's search indexes an operation's summary, description, method,
 * path and parameters, not its operationId, so without that line "createPet" finds nothing. A
 * deprecated operation's description also starts with a notice derived from its markers
 * (`x-deprecated-at`, `x-sunset`, `x-replacement`): when it goes away, what to call instead, and
 * the brownouts before that, where a reader meets the operation (Redoc shows only a badge).
 *
 * The server serves dist/docs-server/index.html at GET /docs, with its own address in the
 * Servers panel. Redoc renders the page ahead (server-side) and then hydrates it from the
 * definition embedded in the last <script>, so the server's URL must be in both alike (React keeps
 * the pre-rendered text when they differ): the placeholder is rendered by Redoc itself, into the
 * panel's HTML and the definition's JSON, and replaced as a plain string.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundledSpecPath, docsPath, projectRoot, SERVED_ORIGIN_PLACEHOLDER, servedDocsPath } from '../src/paths.js';
import { redoclyOutput } from './lib/redocly.js';

const HELP = `Usage: npm run docs

Builds the API reference from generated/openapi.json (run \`npm run generate\` first when the
spec changed) into dist/docs/index.html, a single HTML file that makes no network request when
opened, and copies the contract to dist/docs/openapi.json and its changelog (spec/CHANGELOG.md)
to dist/docs/CHANGELOG.md: the folder to publish. Also writes dist/docs-server/index.html, the
page the server serves at GET /docs, which lists that server first among the servers.

  --help   show this text`;

/**
 * What the page may load: only what it carries inline (or derives from it as data:/blob:).
 * 'unsafe-eval' because Redoc's search (flexsearch) builds its web worker's code at run time.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline' 'unsafe-eval' blob:",
  'worker-src blob:',
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Stands in for the Redocly logo of the attribution badge, which Redoc fetches from cdn.redoc.ly. */
const REDOCLY_WORDMARK =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="54" height="14" viewBox="0 0 54 14"><text x="0" y="11" font-family="system-ui,sans-serif" font-size="11" fill="#0044d4">Redocly</text></svg>',
  );
const REDOCLY_LOGO_URL = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;

/** Remote references the browser would fetch: when it parses the page, or when Redoc runs. */
const REMOTE_RESOURCE = [
  /<(?:script|link|img|iframe|source|embed|object|video|audio|track|input)\b[^>]*?\s(?:src|href|data|poster|srcset)\s*=\s*["']?(?:https?:)?\/\//gi,
  /url\(\s*["']?(?:https?:)?\/\//gi,
  /@import\s+(?:url\()?\s*["']?(?:https?:)?\/\//gi,
  /\bimport\s*(?:\(\s*|[\w*{}\s,$]*\bfrom\s*)["'](?:https?:)?\/\//g,
  // Fetched by Redoc's code at run time (the badge logo); seal() must have replaced it.
  /https:\/\/cdn\.redoc\.ly\//g,
];

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}
if (args.length > 0) {
  console.error(`Unknown argument: ${args.join(' ')}\n\n${HELP}`);
  process.exit(2);
}

const root = projectRoot;
const rel = (file: string) => relative(root, file);
const started = performance.now();
const changelogPath = join(root, 'spec', 'CHANGELOG.md');

if (!existsSync(bundledSpecPath)) {
  console.error(`${rel(bundledSpecPath)} is missing: run \`npm run generate\` first.`);
  process.exit(1);
}
if (!existsSync(changelogPath)) {
  console.error(`${rel(changelogPath)} is missing: the docs publish the contract's changelog.`);
  process.exit(1);
}

type Document = { servers?: { url: string; description?: string }[]; paths?: Record<string, Record<string, unknown>> };
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** The fields of an operation the docs add to. */
interface DocsOperation {
  operationId?: string;
  description?: string;
  deprecated?: boolean;
  'x-deprecated-at'?: unknown;
  'x-sunset'?: unknown;
  'x-replacement'?: unknown;
}

/** `2030-12-05` for a midnight UTC instant (a sunset is a day), the full instant otherwise. */
function day(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return value;
  const instant = new Date(at).toISOString().replace('.000Z', 'Z');
  return instant.endsWith('T00:00:00Z') ? instant.slice(0, 10) : instant;
}

/** A deprecated operation's notice (a Markdown blockquote), from its markers; the server's 410 policy in words. */
function deprecationNotice(op: DocsOperation): string {
  const since = day(op['x-deprecated-at']);
  const sunset = day(op['x-sunset']);
  const replacement = typeof op['x-replacement'] === 'string' ? op['x-replacement'].trim() : '';
  const sentences = [
    `**Deprecated**${since ? ` since ${since}` : ''}.`,
    sunset ? `Removed on ${sunset}: from then on it answers \`410 Gone\`.` : '',
    replacement ? `Use ${replacement} instead.` : '',
    `${sunset ? 'Before that date, the' : 'The'} service may announce brownouts: windows in which it answers \`410 Gone\` (code \`operation_brownout\`) so that callers notice.`,
  ];
  return `> ${sentences.filter(Boolean).join(' ')}`;
}

/**
 * The contract as the docs render it: a deprecated operation's description starts with its
 * deprecation notice, and every operation's ends with its operationId (for search).
 */
function docsDocument(): Document {
  const document = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as Document;
  for (const item of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || typeof operation !== 'object' || operation === null) continue;
      const op = operation as DocsOperation;
      const parts = [op.deprecated === true ? deprecationNotice(op) : '', op.description?.trimEnd() ?? '', op.operationId ? `Operation ID: \`${op.operationId}\`` : ''].filter(Boolean);
      if (parts.length > 0) op.description = parts.join('\n\n');
    }
  }
  return document;
}

/** Runs redocly build-docs (Redoc inlined, not from a CDN) on `document` and returns the page it wrote. */
function buildDocs(document: Document): string {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-docs-'));
  try {
    const input = join(dir, 'openapi.json');
    writeFileSync(input, JSON.stringify(document));
    return redoclyOutput('build-docs', input, 'index.html', ['--inlineBundle']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Makes the page self-contained: no logo from the CDN, and a CSP that forbids remote loads. */
function seal(html: string): string {
  const head = /<head[^>]*>/i.exec(html);
  if (!head) throw new Error('the page redocly wrote has no <head>');
  const at = head.index + head[0].length;
  const sealed = `${html.slice(0, at)}\n  <meta http-equiv="Content-Security-Policy" content="${CSP}" />${html.slice(at)}`;
  return sealed.replace(REDOCLY_LOGO_URL, REDOCLY_WORDMARK);
}

/** Writes next to the target and renames, so the server never serves a half-written file. */
function writeAtomically(file: string, write: (temp: string) => void): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  try {
    write(temp);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
}

const published = docsDocument();
const served: Document = {
  ...published,
  servers: [{ url: `${SERVED_ORIGIN_PLACEHOLDER}/v1`, description: 'This server (the one showing these docs)' }, ...(published.servers ?? [])],
};
let html: string;
let servedHtml: string;
try {
  html = seal(buildDocs(published));
  servedHtml = seal(buildDocs(served));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
const remote = [html, servedHtml].flatMap((page) => REMOTE_RESOURCE.flatMap((pattern) => page.match(pattern) ?? []));
if (remote.length > 0) {
  console.error(`The page would still load remote resources:\n  ${remote.join('\n  ')}`);
  process.exit(1);
}
if (!servedHtml.includes(SERVED_ORIGIN_PLACEHOLDER) || html.includes(SERVED_ORIGIN_PLACEHOLDER)) {
  console.error(`The server's page must list ${SERVED_ORIGIN_PLACEHOLDER} and the published one must not.`);
  process.exit(1);
}

const specCopy = join(dirname(docsPath), 'openapi.json');
const changelogCopy = join(dirname(docsPath), 'CHANGELOG.md');
const servedPath = servedDocsPath(docsPath);
writeAtomically(docsPath, (temp) => writeFileSync(temp, html));
writeAtomically(servedPath, (temp) => writeFileSync(temp, servedHtml));
writeAtomically(specCopy, (temp) => copyFileSync(bundledSpecPath, temp));
writeAtomically(changelogCopy, (temp) => copyFileSync(changelogPath, temp));

const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`Docs: ${rel(docsPath)} (${Math.ceil(Buffer.byteLength(html) / 1024)} KiB, self-contained)`);
console.log(`Spec: ${rel(specCopy)}`);
console.log(`Changelog: ${rel(changelogCopy)}`);
console.log(`Served at GET /docs: ${rel(servedPath)} (this server listed first)`);
console.log(`Built in ${seconds} s. Open ${pathToFileURL(docsPath).href}, or GET /docs on a running server.`);
