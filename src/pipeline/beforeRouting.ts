/**
 * What is refused before the router sees the request:
 * - `Authorization` sent twice: node:http keeps the first and drops the rest, a proxy may read
 *   another one, so a request whose key depends on which is read is refused whatever the order;
 * - a path with a trailing slash (`/v1/pets/`): openapi-backend would route it as `/v1/pets`, a
 *   second address for each resource that the contract, the mock and the docs do not have; it is
 *   a 404 like any unknown path, naming the address without the slash.
 */
import { redactApiKeys } from '../domain/apiKey.js';
import { invalidFields, refuse } from '../errors/refusal.js';
import type { Stage } from '../http/stage.js';

export const beforeRouting: Stage = {
  name: 'before routing',
  run(exchange, next) {
    const { req } = exchange;
    const { rawHeaders } = req;
    let authorizations = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i] as string;
      if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
    }
    if (authorizations > 1) throw invalidFields([{ in: 'header', field: 'Authorization', message: 'must be sent once' }]);
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path.length > 1 && path.endsWith('/')) throw refuse('not_found', 'trailingSlash', redactApiKeys(path), redactApiKeys(path.replace(/\/+$/, '')));
    return next(exchange);
  },
};
