/**
 * The answer: wraps the rest of the path and, once the handler (or exactly-once's replay) has a
 * result, has the responder write it (src/http/respond.ts: the exchange's headers, the ETag and
 * 304 of a conditional read, byte ranges, the contract check, the JSON). A result it cannot write
 * (a body JSON cannot serialise) throws, and the exit answers a 500.
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
