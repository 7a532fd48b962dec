/**
 * CORS, so a browser app on another origin can call the API (CORS_ORIGINS; off when unset, the
 * production default). What the browser is told comes from the contract, read from the
 * openapi-backend that routes the API, so a later operation's methods and headers are covered
 * without touching this file:
 *
 * - A preflight under the API (OPTIONS with `Origin` and `Access-Control-Request-Method`) from an
 *   allowed origin is answered here with a 204, before routing (which would answer 405: no
 *   operation has OPTIONS) and before the key check (a browser never sends credentials on a
 *   preflight): the origin echoed with `Vary: Origin`, the methods the router has for that path,
 *   Authorization, Content-Type, X-Request-Id and every header the contract lets a client send
 *   (header parameters, `apiKey` schemes `in: header`), and a Max-Age. A preflight for a path the
 *   API does not have goes on to the normal 404.
 * - Every other response to an allowed origin, whatever its status and lane, carries the origin,
 *   `Vary: Origin` and `Access-Control-Expose-Headers`: the headers the server sets itself and
 *   every response header any operation of the contract declares.
 * - A request from an origin that is not allowed (or with no Origin) is served as if CORS were
 *   off: no CORS headers, so the browser refuses to let the page read the answer, and a preflight
 *   gets what routing answers an OPTIONS (405), which the browser treats as a refusal.
 *
 * No `Access-Control-Allow-Credentials`: the API takes bearer keys, never cookies.
 * `Cross-Origin-Resource-Policy: same-origin` stays on every response: it governs only no-cors
 * loads (an <img> or <script> pointing at the API), never a CORS fetch, so it costs an allowed
 * origin nothing and keeps everyone else's pages from pulling API responses into their process.
 */
import type { OpenAPIBackend } from 'openapi-backend';
import type { CorsOrigins } from './config.js';
import type { Exchange } from '../../http/exchange.js';
import { answerJson, setAhead } from '../../http/respond.js';

/**
 * How long a browser may reuse a preflight answer (Chromium caps it at 2 h). Long is safe: a
 * request needing a method or header the cached answer lacks is preflighted again, and an origin
 * taken off the list gets no Access-Control-Allow-Origin on the actual response.
 */
export const PREFLIGHT_MAX_AGE_S = 7200;

/** Request headers any operation takes besides the contract's parameters. */
const BASE_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'];
/**
 * Response headers the server sets itself, whatever the contract's response declares (the request
 * id; Retry-After on a 503; Allow on a 405; the deprecation pair from `x-` extensions), and the
 * two a client of this contract reads for paging and creation.
 */
const BASE_RESPONSE_HEADERS = ['X-Request-Id', 'Link', 'Location', 'Deprecation', 'Sunset', 'Retry-After', 'Allow'];

export interface CorsOptions {
  origins: CorsOrigins;
  /** Initialised: its operations are dereferenced. */
  backend: OpenAPIBackend;
  /** Whether a URL is under the API's base path. */
  serves(url: string): boolean;
  /** The methods the API has for a request path (empty when it has none), as the router says. */
  allowedMethods(path: string): string[];
}

export interface Cors {
  /**
   * For a request with an Origin header: sets the CORS headers when the origin is allowed, and
   * answers the request when it is a preflight under the API. True when it answered.
   */
  handle(exchange: Exchange, origin: string): boolean;
  /** The CORS headers of an answer to `origin`, or undefined when it is not allowed (node:http's own refusals: ../../transport/clientError.ts). */
  headersFor(origin: string | undefined): Record<string, string> | undefined;
  /** What the derived lists hold (tests, logs). */
  readonly allowHeaders: string;
  readonly exposeHeaders: string;
}

/** Adds names not yet in the list, compared case-insensitively, keeping the first spelling. */
function addNames(list: string[], names: Iterable<string>): void {
  const seen = new Set(list.map((name) => name.toLowerCase()));
  for (const name of names) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    list.push(name);
  }
}

/** The header names a client may send: header parameters and header `apiKey` schemes of the contract. */
export function requestHeadersOf(backend: OpenAPIBackend): string[] {
  const names = [...BASE_REQUEST_HEADERS];
  for (const operation of backend.getOperations()) {
    for (const parameter of operation.parameters ?? []) {
      if ('in' in parameter && parameter.in === 'header') addNames(names, [parameter.name]);
    }
  }
  const schemes = (backend.definition.components?.securitySchemes ?? {}) as Record<string, { type?: string; in?: string; name?: string }>;
  for (const scheme of Object.values(schemes)) {
    if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) addNames(names, [scheme.name]);
  }
  return names;
}

/** The header names a client may read: the server's own and every response header the contract declares. */
export function responseHeadersOf(backend: OpenAPIBackend): string[] {
  const names = [...BASE_RESPONSE_HEADERS];
  for (const operation of backend.getOperations()) {
    for (const response of Object.values(operation.responses ?? {})) {
      if (typeof response === 'object' && response !== null && 'headers' in response && response.headers) addNames(names, Object.keys(response.headers));
    }
  }
  return names;
}

export function createCors(options: CorsOptions): Cors {
  const { origins } = options;
  /** Undefined: any origin (`*`). */
  const allowed = origins === '*' ? undefined : new Set(origins);
  const allowHeaders = requestHeadersOf(options.backend).join(', ');
  const exposeHeaders = responseHeadersOf(options.backend).join(', ');
  const maxAge = String(PREFLIGHT_MAX_AGE_S);
  /** This runs in node:http's listener, outside any promise: a path the router chokes on goes on to the normal handling. */
  const methodsFor = (path: string): string[] => {
    try {
      return options.allowedMethods(path);
    } catch {
      return [];
    }
  };

  return {
    allowHeaders,
    exposeHeaders,
    headersFor(origin) {
      if (origin === undefined || (allowed !== undefined && !allowed.has(origin))) return undefined;
      return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin', 'Access-Control-Expose-Headers': exposeHeaders };
    },
    handle(exchange, origin) {
      if (allowed !== undefined && !allowed.has(origin)) return false;
      const { req } = exchange;
      // The origin itself, even for `*`: one rule for both, and a page's own origin is what it checks.
      setAhead(exchange, 'Access-Control-Allow-Origin', origin);
      setAhead(exchange, 'Vary', 'Origin');
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        const url = req.url ?? '/';
        if (options.serves(url)) {
          const methods = methodsFor(url.split('?', 1)[0] ?? '');
          if (methods.length > 0) {
            answerJson(exchange, 204, undefined, {
              'Access-Control-Allow-Methods': methods.join(', '),
              'Access-Control-Allow-Headers': allowHeaders,
              'Access-Control-Max-Age': maxAge,
            });
            return true;
          }
        }
      }
      setAhead(exchange, 'Access-Control-Expose-Headers', exposeHeaders);
      return false;
    },
  };
}
