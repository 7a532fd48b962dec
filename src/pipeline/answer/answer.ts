/**
 * The answer: wraps the rest of the path and, once the result is final (the handler's or
 * exactly-once's replay, as the ranges and conditional stages inside it left it: tagged, a 304,
 * a 206), has the responder write it (src/http/respond.ts: the exchange's headers, the contract
 * check, the body). A result it cannot write (a body JSON cannot serialise) throws, and the exit
 * answers a 500.
 */
import type { Responder } from '../../http/respond.js';
import { after, type Stage } from '../../http/stage.js';

export function answerStage(responder: Responder): Stage {
  return {
    name: 'answer',
    run(exchange, next) {
      return after(next(exchange), () => {
        const { result } = exchange;
        if (result === undefined) throw new Error('answer: the handler gave no result');
        responder.answer(exchange, result);
        return undefined;
      });
    },
  };
}
