/**
 * The request body, read only now that the key is known good and the rate limit has counted it,
 * as the operation declares it for the request's media type (src/http/bodies/: JSON and +json,
 * forms, multipart with files, raw bytes; each within its limit), into the parsed request that
 * validation checks next. A body sent to an operation that declares none is a 400.
 */
import { invalidFields } from '../errors/refusal.js';
import { declaredBodies } from '../http/bodies/declared.js';
import { readBody } from '../http/bodies/read.js';
import type { Stage } from './stage.js';

export const bodyStage: Stage = {
  name: 'body',
  run(exchange) {
    const { operation, request } = exchange;
    if (exchange.body === 'none' || operation === undefined || request === undefined) return undefined;
    const bodies = declaredBodies(operation);
    if (bodies === undefined) throw invalidFields([{ in: 'body', field: '', message: 'is not allowed: this operation takes no request body' }]);
    return readBody(exchange, bodies).then(({ declared, mediaType, value }) => {
      exchange.declaredBody = declared;
      exchange.mediaType = mediaType;
      request.requestBody = value;
      return undefined;
    });
  },
};
