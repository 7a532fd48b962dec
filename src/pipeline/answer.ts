/**
 * The handler's result, answered by the responder (src/http/respond.ts: the exchange's headers,
 * the ETag and 304 of a conditional read, the contract check, the JSON). A result it cannot
 * write (a body JSON cannot serialise) throws, and the one exit answers a 500.
 */
import type { Responder } from '../http/respond.js';
import { ANSWERED, type Stage } from './stage.js';

export function answerStage(responder: Responder): Stage {
  return {
    name: 'answer',
    run(exchange) {
      const { result } = exchange;
      if (result === undefined) throw new Error('answer: the handler gave no result');
      responder.answer(exchange, result);
      return ANSWERED;
    },
  };
}
