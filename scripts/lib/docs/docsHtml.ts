/**
 * Text into HTML for the docs pages that scripts/docs.ts writes: escaping, JSON that may sit in a
 * <script> block, and the Content-Security-Policy every page carries.
 */

/**
 * What a docs page may load: only what it carries inline (or derives from it as data:/blob:).
 * 'unsafe-eval' because Redoc's search (flexsearch) builds its web worker's code at run time.
 * connect-src: the "Try it" panel calls the server that serves the page, or a sandbox on this
 * machine (any port: `npm run sandbox -- --port`), never anything further.
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline' 'unsafe-eval' blob:",
  'worker-src blob:',
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  "connect-src 'self' http://localhost:* http://127.0.0.1:*",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/**
 * A value as JSON that can sit inside <script type="application/json">: `<`, `>`, `&` and the
 * two JavaScript line separators as \u escapes, so no string in the contract can close the block.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Escaped text in which `code` spans (Markdown backticks) become <code>. */
export function inlineCodeHtml(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) => (part.length > 2 && part.startsWith('`') && part.endsWith('`') ? `<code>${escapeHtml(part.slice(1, -1))}</code>` : escapeHtml(part)))
    .join('');
}
