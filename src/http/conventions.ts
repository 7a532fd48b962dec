/**
 * What OpenTelemetry's HTTP semantic conventions take from a request, shared by the metrics
 * (../features/metrics/metrics.ts) and the traces (../features/tracing/tracing.ts) so both name a request alike.
 */
import { basePathOf, operationsOf, type OpenApiDocument } from '../shared/spec.js';
import type { Exchange } from './exchange.js';

/**
 * url.scheme: the server speaks plain HTTP; the conventions take the client's scheme from a
 * forwarding header only when it is known, and this server trusts none, so the immediate peer's
 * scheme is the value.
 */
export const URL_SCHEME = 'http';

/** error.type of a request whose connection closed before its response was complete (the conventions ask each instrumentation to list its values). */
export const ABORTED = 'aborted';

/**
 * The methods the conventions know (RFC 9110's, PATCH and QUERY), spelled exactly: any other is
 * `_OTHER`, so a client sending made-up methods cannot mint series. node:http's parser admits more
 * (WebDAV's, PURGE…); the API serves none of them.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE']);

export function conventionalMethod(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/**
 * The route of a request outside the API (Express's routes and the probes answer reads only),
 * never its path; undefined when nothing matched. The docs pages (a release's, the changes page)
 * are one route: their names come from the build.
 */
function routeOutsideApi(method: string | undefined, url: string): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === '/healthz' || path === '/readyz' || path === '/openapi.json' || path === '/docs') return path;
  return path.startsWith('/docs/') ? '/docs/*' : undefined;
}

/**
 * A request's http.route, read once its response is done: under the API the routed operation's
 * (the base path and the spec's template, `/v1/pets/{petId}`), which the exchange takes once
 * routed (src/pipeline/match.ts), so a 404 and a 405 have none and a 401 has its operation's; outside it,
 * routeOutsideApi's.
 */
export function routes(document: OpenApiDocument): (exchange: Exchange) => string | undefined {
  const basePath = basePathOf(document);
  const byOperation = new Map(operationsOf(document).map((operation) => [operation.operationId, `${basePath}${operation.path}`]));
  return (exchange) => {
    const operationId = exchange.operation?.operationId;
    return operationId !== undefined ? byOperation.get(operationId) : routeOutsideApi(exchange.req.method, exchange.req.url ?? '/');
  };
}
