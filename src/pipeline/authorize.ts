/**
 * Refuses what ./authenticate.ts denied (a 401, or a 503 when keys could not be checked). From
 * here on the request belongs to its operation: its answers are checked against that operation's
 * responses, where a refused key check is answered outside any operation (checked as an Error).
 */
import type { Stage } from './stage.js';

export const authorize: Stage = {
  name: 'authorize',
  run(exchange) {
    if (exchange.denied !== undefined) throw exchange.denied;
    exchange.operationId = exchange.operation?.operationId;
    return undefined;
  },
};
