/** What a JSON API should send with every response: nothing cached, sniffed, framed or embedded. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/**
 * The CSP of bytes a handler answers (an image, a file): opened as a page, by a link or a
 * browser's guess, it runs nothing and reaches nothing (nosniff already keeps its media type).
 */
export const SANDBOXED_CSP = `${SECURITY_HEADERS['Content-Security-Policy'] as string}; sandbox`;
