/**
 * One reference page of the docs: Redoc's self-contained page for a contract (redocly build-docs
 * --inlineBundle, which embeds Redoc itself instead of loading it from a CDN), sealed so it loads
 * nothing from afar, then dressed with the version bar and the "Try it" panel.
 *
 * Redoc's own telemetry is off because redocly.yaml says `telemetry: off` (build-docs then writes
 * `disableTelemetry: true` into the page). What remains is patched here, and a
 * Content-Security-Policy in the page blocks anything remote that a later Redoc version might add:
 *
 *   - the "API docs by Redocly" badge loads its logo from cdn.redoc.ly: replaced by an inline SVG
 *   - CSP (./docsHtml.ts): scripts, styles, images, fonts and workers only inline, data: or blob:;
 *     fetch only to the page's own server and to this machine (the panel's calls)
 *
 * Redoc's output is cached by content hash in dist/.docs-cache/ (see renderRedoc): rendering is
 * most of the build's time, and a release's page never changes.
 *
 * The bar and the panel sit outside Redoc's root element (#redoc), which React hydrates, so
 * neither disturbs it; Redoc's navbar variables are set to the bar's height, so its sidebar and
 * the scroll position of an anchor start below the bar.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { projectRoot } from '../../../src/shared/paths.js';
import { redoclyOutput } from '../redocly.js';
import type { DocsDocument } from './docsContract.js';
import { DOCS_PAGE_CSP, scriptJson } from './docsHtml.js';
import { BAR_CSS, BAR_HEIGHT_PX } from './docsMenu.js';
import type { TryItConfig } from './docsTryIt.js';

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

/** What in `html` would still load from afar (empty when the page is self-contained). */
export function remoteResources(html: string): string[] {
  return REMOTE_RESOURCE.flatMap((pattern) => html.match(pattern) ?? []);
}

const BUILD_DOCS_ARGS = ['--inlineBundle'];

/**
 * What decides Redoc's page for a document: the document, the CLI's version and arguments, and
 * redocly.yaml (telemetry, theme). A release never changes, so its page is rendered once.
 */
function renderKey(json: string): string {
  const cli = JSON.parse(readFileSync(join(projectRoot, 'node_modules', '@redocly', 'cli', 'package.json'), 'utf8')) as { version: string };
  const config = readFileSync(join(projectRoot, 'redocly.yaml'), 'utf8');
  return createHash('sha256').update(JSON.stringify([cli.version, BUILD_DOCS_ARGS, config, json])).digest('hex').slice(0, 32);
}

export interface Rendered {
  /** The page, sealed. */
  html: string;
  /** The cache entry it came from or went to (a file name in the cache folder). */
  entry: string;
  cached: boolean;
}

/**
 * Runs redocly build-docs (Redoc inlined, not from a CDN) on `document` and returns the page,
 * sealed. Redoc's output is kept in `cacheDir` under a hash of what decides it, and reused.
 */
export async function renderRedoc(document: DocsDocument, cacheDir: string): Promise<Rendered> {
  const json = JSON.stringify(document);
  const entry = `${renderKey(json)}.html`;
  const cacheFile = join(cacheDir, entry);
  if (existsSync(cacheFile)) return { html: seal(readFileSync(cacheFile, 'utf8')), entry, cached: true };
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-docs-'));
  try {
    const input = join(dir, 'openapi.json');
    writeFileSync(input, json);
    const page = await redoclyOutput('build-docs', input, 'index.html', BUILD_DOCS_ARGS);
    // A concurrent run reads a whole entry or none.
    writeAtomically(cacheFile, page);
    return { html: seal(page), entry, cached: false };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes next to the target and renames, so no reader (the server, a concurrent run) sees a half-written file. */
export function writeAtomically(file: string, content: string | Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, content);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Removes the cache entries this run did not use (contracts since changed, an older Redocly). */
export function pruneRenderCache(cacheDir: string, used: ReadonlySet<string>): void {
  if (!existsSync(cacheDir)) return;
  for (const name of readdirSync(cacheDir)) if (name.endsWith('.html') && !used.has(name)) rmSync(join(cacheDir, name), { force: true });
}

const HEAD = /<head[^>]*>/i;

/** Makes a page self-contained: no logo from the CDN, and a CSP (right after its <head>) that forbids remote loads. */
export function seal(html: string): string {
  if (!HEAD.test(html)) throw new Error('the page has no <head>');
  return html.replace(HEAD, (head) => `${head}\n  <meta http-equiv="Content-Security-Policy" content="${DOCS_PAGE_CSP}" />`).replace(REDOCLY_LOGO_URL, REDOCLY_WORDMARK);
}

const PANEL_CSS = `
#redoc>div{--navbar-height:${BAR_HEIGHT_PX}px !important;--navbar-stack-height:${BAR_HEIGHT_PX}px !important}
body{padding-top:${BAR_HEIGHT_PX}px;margin:0}
#try-it{position:fixed;top:${BAR_HEIGHT_PX}px;right:0;bottom:0;width:min(480px,100vw);z-index:999;overflow:auto;box-sizing:border-box;padding:16px 20px 32px;background:#fff;color:#1b1f2a;border-left:1px solid #c9d1e6;box-shadow:-6px 0 18px rgba(0,0,0,.15);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
#try-it[hidden]{display:none}
#try-it h2{margin:0 0 12px;font-size:20px}
#try-it h3{margin:18px 0 6px;font-size:15px}
#try-it h4{margin:12px 0 4px;font-size:13px;color:#4a5470}
#try-it .try-it-field{display:flex;flex-direction:column;gap:3px;margin:0 0 10px}
#try-it .try-it-field small,#try-it fieldset small,#try-it>small{color:#4a5470}
#try-it label{font-weight:600}
#try-it input,#try-it select,#try-it textarea{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;padding:6px 8px;border:1px solid #aab4cc;border-radius:4px;background:#fff;color:inherit}
#try-it textarea{resize:vertical;min-height:80px}
#try-it fieldset{border:1px solid #c9d1e6;border-radius:6px;margin:0 0 10px;padding:6px 10px 10px}
#try-it fieldset label{font-weight:400;margin-left:4px}
#try-it fieldset input[type=url]{width:100%;box-sizing:border-box;margin-top:4px}
#try-it #try-it-send{padding:8px 22px;border:0;border-radius:6px;background:#1f4fd1;color:#fff;font:600 14px system-ui,sans-serif;cursor:pointer}
#try-it #try-it-send:disabled{background:#8aa0d8;cursor:wait}
#try-it pre{margin:0;padding:8px 10px;background:#f3f5fa;border-radius:4px;white-space:pre-wrap;word-break:break-word;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:50vh;overflow:auto}
#try-it [data-outcome=ok]{color:#116b2e;font-weight:700}
#try-it [data-outcome=refused],#try-it [data-outcome=error]{color:#a4161a;font-weight:700}
`;

let panelScript: Promise<string> | undefined;

/** The panel's browser code (./docsTryItPanel.ts) as one minified script, built once per run. */
export function tryItPanelScript(): Promise<string> {
  panelScript ??= build({
    entryPoints: [fileURLToPath(new URL('./docsTryItPanel.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    minify: true,
    write: false,
    target: 'es2022',
    legalComments: 'none',
  }).then((result) => {
    const code = result.outputFiles[0]?.text ?? '';
    if (code === '' || /<\/script/i.test(code)) throw new Error('the Try it panel did not bundle into one inline script');
    return code;
  });
  return panelScript;
}

/** `page` (a sealed Redoc page) with `bar` above it and the Try it panel for `config`. */
export function dressReferencePage(page: string, bar: string, config: TryItConfig, script: string): string {
  const root = page.indexOf('<div id="redoc">');
  const end = page.lastIndexOf('</body>');
  if (root === -1 || end < root) throw new Error('the Redoc page has no <div id="redoc"> before its </body>');
  // The <head>'s end: the last one before Redoc's root (the inlined code holds the string too).
  const headEnd = page.lastIndexOf('</head>', root);
  if (headEnd === -1) throw new Error('the Redoc page has no </head>');
  return [
    page.slice(0, headEnd),
    `<style id="docs-bar-style">${BAR_CSS}${PANEL_CSS}</style>\n`,
    page.slice(headEnd, root),
    `${bar}<aside id="try-it" aria-label="Try it" hidden></aside>\n`,
    page.slice(root, end),
    `<script type="application/json" id="try-it-config">${scriptJson(config)}</script>\n<script>${script}</script>\n`,
    page.slice(end),
  ].join('');
}
