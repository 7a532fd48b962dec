/**
 * Routing, by openapi-backend's router called directly: the operation of the method and path
 * (404 for an unknown path, 405 with `Allow` for a known path and another method), then the path,
 * query, header and cookie parameters parsed as that operation declares them. HEAD is routed as
 * the GET (RFC 9110 §9.3.2): node:http sends the GET's status and headers and drops the body.
 */
import type { OpenAPIBackend, Request } from 'openapi-backend';
import { redactApiKeys } from '../domain/apiKey.js';
import { invalidFields, refuse } from '../errors/refusal.js';
import type { Stage } from '../http/stage.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The methods the API has for a request path (`/v1/pets`), as the router says: a 405's Allow, a
 * CORS preflight's answer. HEAD wherever GET is.
 */
export function allowedMethods(backend: OpenAPIBackend, path: string): string[] {
  const methods = METHODS.filter((method) => backend.router.matchOperation({ method, path, headers: {} }) !== undefined);
  if (methods.includes('get') && !methods.includes('head')) methods.splice(methods.indexOf('get') + 1, 0, 'head');
  return methods.map((m) => m.toUpperCase());
}

/** Whether a URL is under the API's base path, on a segment boundary (as openapi-backend's apiRoot, whose check is private). */
export function underBasePath(basePath: string, url: string): boolean {
  const end = basePath.length;
  return url.startsWith(basePath) && (url.length === end || url[end] === '/' || url[end] === '?');
}

export function matchStage(backend: OpenAPIBackend): Stage {
  const { router } = backend;
  return {
    name: 'match',
    run(exchange, next) {
      const { req } = exchange;
      const url = req.url ?? '/';
      // Node's header values are strings (or string[] for a repeated Set-Cookie-like header), never undefined.
      const request: Request = { method: req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'), path: url, headers: req.headers as Request['headers'] };
      const operation = router.matchOperation(request);
      if (operation === undefined) {
        const path = url.split('?', 1)[0] ?? '';
        const allow = allowedMethods(backend, path);
        if (allow.length === 0) throw refuse('not_found', 'noSuchPath', redactApiKeys(path));
        throw refuse('method_not_allowed', 'notOnPath', req.method ?? 'GET', redactApiKeys(path), allow.join(', '));
      }
      exchange.operation = operation;
      try {
        exchange.request = router.parseRequest(request, operation);
      } catch (error) {
        // The router decodes each path parameter (decodeURIComponent), which throws on a bad escape.
        if (error instanceof URIError) throw invalidFields([{ in: 'path', field: '', message: 'is not valid percent-encoding' }]);
        throw error;
      }
      return next(exchange);
    },
  };
}
