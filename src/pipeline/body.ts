/**
 * The request body, read only now that the key is known good and the rate limit has counted it,
 * as the operation declares it for the request's media type (src/http/bodies/: JSON and +json,
 * forms, multipart with files, raw bytes; each within its limit), into the parsed request that
 * validation checks next. A body sent to an operation that declares none is a 400, and so is
 * none (or an empty one) where the operation requires one, whatever its media types.
 */
import { invalidFields } from '../errors/refusal.js';
import { declaredBodies } from '../http/bodies/declared.js';
import { readBody } from '../http/bodies/read.js';
import { BODY_REQUIRED } from '../http/openapiBackend.js';
import type { Stage } from '../http/stage.js';
import { marks, stripMarked } from '../http/shapes/views.js';

export const bodyStage: Stage = {
  name: 'body',
  run(exchange, next) {
    const { operation, request } = exchange;
    if (operation === undefined || request === undefined) return next(exchange);
    if (exchange.body === 'none') {
      const declared = operation.requestBody;
      if (declared !== undefined && 'required' in declared && declared.required === true) throw invalidFields([{ in: 'body', field: '', message: BODY_REQUIRED }]);
      return next(exchange);
    }
    const bodies = declaredBodies(operation);
    if (bodies === undefined) throw invalidFields([{ in: 'body', field: '', message: 'is not allowed: this operation takes no request body' }]);
    return readBody(exchange, bodies).then(({ declared, mediaType, value }) => {
      exchange.declaredBody = declared;
      exchange.mediaType = mediaType;
      // A read-only property is the server's to say: what a client sends back is dropped (src/http/shapes/views.ts).
      if (marks(declared.schema, 'readOnly')) stripMarked(declared.schema, 'readOnly', value);
      request.requestBody = value;
      return next(exchange);
    });
  },
};
