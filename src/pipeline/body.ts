/**
 * The request body, read only now that the key is known good and the rate limit has counted it
 * (src/http/body.ts reads it: media type, byte limit, UTF-8 JSON), into the parsed request that
 * validation checks next. A body sent to an operation that declares none is a 400.
 */
import { invalidFields } from '../errors/refusal.js';
import { readJsonBody } from '../http/body.js';
import type { Stage } from './stage.js';

export const bodyStage: Stage = {
  name: 'body',
  run(exchange) {
    if (exchange.body === 'none') return undefined;
    const requestBody = exchange.operation?.requestBody as { content?: Record<string, unknown> } | undefined;
    if (!requestBody) throw invalidFields([{ in: 'body', field: '', message: 'is not allowed: this operation takes no request body' }]);
    return readJsonBody(exchange, Object.keys(requestBody.content ?? {})).then((value) => {
      (exchange.request as { requestBody: unknown }).requestBody = value;
      return undefined;
    });
  },
};
