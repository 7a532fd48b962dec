/**
 * The docs' "What changed" page (changes.html): for each step from one contract to the next (each
 * release to the one after it, the newest release to the working contract), newest step first,
 * what changed, grouped by operation, one line per change with its kind. The lines come from
 * ../contract/contractChanges.ts (the same words the changelog gets); this module only lays them out, as
 * plain HTML with every text escaped, no script, under the same CSP as the reference pages.
 */
import type { ChangeGroup } from '../contract/contractChanges.js';
import { operationsOf } from '../operations.js';
import { DOCS_PAGE_CSP, escapeHtml, inlineCodeHtml } from './docsHtml.js';
import { BAR_CSS, BAR_HEIGHT_PX, docsHref, type DocsPageId, type DocsVariant } from './docsMenu.js';

/** One end of a step: a page of the docs and the contract it shows. */
export interface StepEnd {
  page: DocsPageId;
  label: string;
  /** Where each operation of that contract is on its page: operationId → `#tag/…/operation/…`. */
  anchors: ReadonlyMap<string, string>;
}

export interface ChangeStep {
  from: StepEnd;
  to: StepEnd;
  groups: ChangeGroup[];
}

/** Redoc's anchor for each operation of a bundled contract (`#tag/Pets/operation/getPet`): the form the deprecation Link uses too. */
export function operationAnchors(document: unknown): Map<string, string> {
  const anchors = new Map<string, string>();
  for (const { operation, operationId } of operationsOf(document)) {
    if (operationId === undefined) continue;
    const tag = Array.isArray(operation.tags) && typeof operation.tags[0] === 'string' ? operation.tags[0] : undefined;
    anchors.set(operationId, tag === undefined ? `#operation/${operationId}` : `#tag/${encodeURIComponent(tag)}/operation/${operationId}`);
  }
  return anchors;
}

const PAGE_CSS = `
body{margin:0;padding-top:${BAR_HEIGHT_PX}px;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f2a;background:#fff}
main{max-width:920px;margin:0 auto;padding:24px 24px 64px}
h1{font-size:28px;margin:12px 0 8px}
h2{font-size:22px;margin:40px 0 8px;padding-top:8px;border-top:1px solid #dde3f0}
h3{font-size:17px;margin:22px 0 6px}
a{color:#1f4fd1}
code{font:0.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f0f2f8;padding:1px 4px;border-radius:3px}
ul.changes{list-style:none;margin:0;padding:0}
ul.changes li{display:flex;gap:10px;align-items:baseline;padding:4px 0;border-bottom:1px solid #f0f2f8}
.kind{flex:none;width:86px;text-align:center;font:600 12px/1.8 system-ui,sans-serif;text-transform:uppercase;letter-spacing:.04em;border-radius:4px}
.kind-added{background:#dff5e5;color:#116b2e}
.kind-changed{background:#e3ebff;color:#1f3f99}
.kind-deprecated{background:#fff1d6;color:#7a4b00}
.kind-removed{background:#fde2e2;color:#9b1c1c}
.none{color:#4a5470;font-style:italic}
`;

/** `subject` with its operationId linked to the operation on `page` (subjects read "getPet (GET /pets/{petId})"). */
function subjectHtml(group: ChangeGroup, href: string | undefined): string {
  const { subject, operationId } = group;
  if (!operationId || href === undefined) return escapeHtml(subject);
  const rest = subject.startsWith(operationId) ? subject.slice(operationId.length) : ` ${subject}`;
  return `<a href="${escapeHtml(href)}"><code>${escapeHtml(operationId)}</code></a>${escapeHtml(rest)}`;
}

/** Where to read about a changed operation: in the later contract, or the earlier one if it is gone from it. */
function operationHref(step: ChangeStep, operationId: string, variant: DocsVariant): string | undefined {
  for (const end of [step.to, step.from]) {
    const anchor = end.anchors.get(operationId);
    if (anchor !== undefined) return `${docsHref(end.page, { kind: 'changes' }, variant)}${anchor}`;
  }
  return undefined;
}

function stepId(step: ChangeStep): string {
  const name = (end: StepEnd) => (end.page.kind === 'release' ? end.page.version : end.page.kind);
  return `from-${name(step.from)}-to-${name(step.to)}`;
}

function stepHtml(step: ChangeStep, variant: DocsVariant): string {
  const link = (end: StepEnd) => `<a href="${escapeHtml(docsHref(end.page, { kind: 'changes' }, variant))}">${escapeHtml(end.label)}</a>`;
  const id = stepId(step);
  const lines = [`<section id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-title">`, `<h2 id="${escapeHtml(id)}-title">${link(step.from)} → ${link(step.to)}</h2>`];
  if (step.groups.length === 0) lines.push('<p class="none">No change to the contract.</p>');
  for (const group of step.groups) {
    lines.push(`<h3>${subjectHtml(group, group.operationId ? operationHref(step, group.operationId, variant) : undefined)}</h3>`, '<ul class="changes">');
    for (const change of group.changes) {
      lines.push(`<li><span class="kind kind-${escapeHtml(change.kind)}">${escapeHtml(change.kind)}</span><span class="text">${inlineCodeHtml(change.text)}</span></li>`);
    }
    lines.push('</ul>');
  }
  lines.push('</section>');
  return lines.join('\n');
}

/** The whole page: `bar` on top, then the steps in the order given (newest first). */
export function changesPageHtml(bar: string, steps: readonly ChangeStep[], variant: DocsVariant, changelogHref: string | undefined): string {
  const changelog = changelogHref ? `<a href="${escapeHtml(changelogHref)}">changelog</a>` : 'changelog (spec/CHANGELOG.md)';
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta http-equiv="Content-Security-Policy" content="${DOCS_PAGE_CSP}" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>What changed: Animal Store API</title>
  <style>${BAR_CSS}${PAGE_CSS}</style>
</head>
<body>
${bar}
<main>
<h1>What changed in the contract</h1>
<p>Each release compared with the one after it, and the newest release with the working contract (what is not released yet), newest first. The lines are derived from the contracts themselves; the ${changelog} has the authors' notes.</p>
${steps.length === 0 ? '<p class="none">No release yet: nothing to compare.</p>' : steps.map((step) => stepHtml(step, variant)).join('\n')}
</main>
</body>
</html>
`;
}
