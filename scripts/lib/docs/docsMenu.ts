/**
 * The bar at the top of every docs page: the version menu (the working contract, each release
 * newest first, "What changed") and, on the reference pages, the "Try it" button.
 *
 * Each page exists twice: in the published folder (dist/docs/, opened from disk or any static
 * host) its links are relative to the page's own place, so the folder works wherever it is put;
 * as the API's server serves it (dist/docs-server/, under /docs) its links are absolute /docs
 * paths, because the working page answers at /docs, /docs/ and /docs/index.html alike and a
 * relative link cannot work from all three.
 */
import { escapeHtml } from './docsHtml.js';

export type DocsPageId = { kind: 'working' } | { kind: 'release'; version: string } | { kind: 'changes' };
export type DocsVariant = 'published' | 'served';

/** Height of the bar; Redoc is told it has a navbar this high, so its sidebar and anchors sit below it. */
export const BAR_HEIGHT_PX = 44;

/** Where `target` is, seen from `from`, in one variant of the folder. */
export function docsHref(target: DocsPageId, from: DocsPageId, variant: DocsVariant): string {
  if (variant === 'served') {
    if (target.kind === 'working') return '/docs';
    if (target.kind === 'release') return `/docs/${target.version}/`;
    return '/docs/changes.html';
  }
  const up = from.kind === 'release' ? '../' : '';
  if (target.kind === 'working') return `${up}index.html`;
  if (target.kind === 'release') return `${up}${target.version}/index.html`;
  return `${up}changes.html`;
}

function label(page: DocsPageId): string {
  if (page.kind === 'working') return 'Working contract';
  if (page.kind === 'release') return page.version;
  return 'What changed';
}

function samePage(a: DocsPageId, b: DocsPageId): boolean {
  return a.kind === b.kind && (a.kind !== 'release' || (b.kind === 'release' && a.version === b.version));
}

/** The bar's CSS: fixed on top; on a Redoc page, Redoc's own navbar variables make room for it. */
export const BAR_CSS = `
#docs-bar{position:fixed;top:0;left:0;right:0;height:${BAR_HEIGHT_PX}px;z-index:1000;display:flex;align-items:center;gap:16px;padding:0 16px;box-sizing:border-box;background:#16213e;color:#fff;font:14px/1.2 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
#docs-bar .docs-bar-title{font-weight:600;white-space:nowrap}
#docs-bar nav{display:flex;align-items:center;min-width:0}
#docs-bar nav ul{display:flex;gap:4px;margin:0;padding:0;list-style:none;flex-wrap:nowrap;overflow-x:auto}
#docs-bar nav a{display:block;padding:6px 10px;border-radius:6px;color:#dfe6ff;text-decoration:none;white-space:nowrap}
#docs-bar nav a:hover,#docs-bar nav a:focus-visible{background:#2c3a66;color:#fff}
#docs-bar nav a[aria-current="page"]{background:#fff;color:#16213e;font-weight:600}
#docs-bar .docs-bar-label{padding-right:6px;color:#9fb0dd}
#docs-bar #try-it-toggle{margin-left:auto;padding:6px 14px;border:1px solid #dfe6ff;border-radius:6px;background:transparent;color:#fff;font:inherit;cursor:pointer}
#docs-bar #try-it-toggle[aria-expanded="true"]{background:#fff;color:#16213e}
`;

/**
 * The bar for `current`, linking every page of `releases` (newest first). `tryIt` adds the
 * button that opens the panel (reference pages only).
 */
export function barHtml(current: DocsPageId, releases: readonly string[], variant: DocsVariant, tryIt: boolean): string {
  const pages: DocsPageId[] = [{ kind: 'working' }, ...releases.map((version): DocsPageId => ({ kind: 'release', version })), { kind: 'changes' }];
  const items = pages.map((page) => {
    const current_ = samePage(page, current) ? ' aria-current="page"' : '';
    return `<li><a href="${escapeHtml(docsHref(page, current, variant))}"${current_}>${escapeHtml(label(page))}</a></li>`;
  });
  return [
    '<header id="docs-bar">',
    '<span class="docs-bar-title">Animal Store API</span>',
    `<nav aria-label="Contract versions"><span class="docs-bar-label">Version</span><ul>${items.join('')}</ul></nav>`,
    tryIt ? '<button id="try-it-toggle" type="button" aria-expanded="false" aria-controls="try-it">Try it</button>' : '',
    '</header>',
  ].join('');
}
