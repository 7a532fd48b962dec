/**
 * Exactly-once, for every operation that declares the `Idempotency-Key` header parameter, without
 * its handler doing anything for it: a stage that wraps the handler's. A request with a key is served inside a unit of work
 * (src/store/queries/unitOfWork.ts): the key's record is looked up, the rest of the path (the handler) runs, and its answer
 * (status, headers, body as sent) is recorded in the same transaction as the handler's writes, so
 * a crash keeps both or neither. A retry with an equal request gets that answer again; with
 * another request, a 422; while the first is still being served, a 409. Requests with keys that
 * arrive together share one transaction (group commit, src/store/queries/batcher.ts), as creates without
 * keys do in their stores. It is placed before the handler, inside the conditional and ranges stages
 * (src/pipeline/answer/): it records the handler's answer as the handler gave it, and a replay is
 * tagged, answered 304 and ranged on its way out as a fresh answer is.
 */
import type { Kysely } from 'kysely';
import type { Operation } from 'openapi-backend';
import { refuse } from '../../errors/refusal.js';
import type { AnyHandlerResult, Exchange } from '../../http/exchange.js';
import type { Next, Stage } from '../../http/stage.js';
import { BinaryBody, JsonText } from '../../shared/schemas.js';
import { createBatcher } from '../../store/queries/batcher.js';
import type { Database, Dialect } from '../../store/schema.js';
import { inUnitOfWork } from '../../store/queries/unitOfWork.js';
import { isDatabaseUnavailable } from '../../shared/unavailable.js';
import { fingerprintOf } from './fingerprint.js';
import { createKeyRecords, KeyRecordedMeanwhile, slotOf, type Claim, type Lookup, type RecordedAnswer } from './records.js';

const HEADER = 'idempotency-key';
const REPLAYED = 'Idempotent-Replayed';

export interface ExactlyOnceOptions {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Hears the size of each group commit (the metrics' histogram). */
  onBatch?: ((size: number) => void) | undefined;
}

/** Whether the operation declares the header (by any name spelling: header names are case-insensitive). */
const declaresKey = (operation: Operation): boolean => (operation.parameters ?? []).some((p) => 'in' in p && p.in === 'header' && p.name.toLowerCase() === HEADER);

/** Whether the spec declares `Idempotent-Replayed` on the answer's status: a replay says so only where the contract lets it. */
function declaresReplayed(operation: Operation, status: number): boolean {
  const response = operation.responses?.[String(status)];
  const headers = response !== undefined && 'headers' in response ? response.headers : undefined;
  return Object.keys(headers ?? {}).some((name) => name.toLowerCase() === REPLAYED.toLowerCase());
}

/** The answer as it is sent and recorded: a JSON body serialised once, so the replay is byte for byte the first. */
function recorded({ status, body, headers = {} }: AnyHandlerResult): { result: AnyHandlerResult; answer: RecordedAnswer } {
  if (body === undefined || body === null) return { result: { status, body, headers }, answer: { status, headers: { ...headers }, mediaType: undefined, body: undefined } };
  if (body instanceof BinaryBody) return { result: { status, body, headers }, answer: { status, headers: { ...headers }, mediaType: body.mediaType, body: body.bytes } };
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  return { result: { status, body: new JsonText(text), headers }, answer: { status, headers: { ...headers }, mediaType: 'application/json', body: Buffer.from(text, 'utf8') } };
}

function replayOf(operation: Operation, { status, headers, mediaType, body }: RecordedAnswer): AnyHandlerResult {
  const replayed = declaresReplayed(operation, status) ? { ...headers, [REPLAYED]: 'true' } : headers;
  if (body === undefined || mediaType === undefined) return { status, body: undefined, headers: replayed };
  return { status, body: mediaType === 'application/json' ? new JsonText(body.toString('utf8')) : new BinaryBody(body, mediaType), headers: replayed };
}

type Item = { claim: Claim; exchange: Exchange; next: Next };
type Outcome = { result: AnyHandlerResult } | 'in_use' | 'reused';

export function exactlyOnceStage(operations: readonly Operation[], { db, dialect, onBatch }: ExactlyOnceOptions): Stage | undefined {
  const keyed = new Set(operations.filter(declaresKey).map((operation) => operation.operationId));
  // No operation takes a key: no stage, so no request pays for one.
  if (keyed.size === 0) return undefined;
  const records = createKeyRecords(db, dialect);

  /** One group commit: every key looked up at once, the new ones' handlers run, their answers recorded, all in one transaction. */
  const serve = (items: readonly Item[]): Promise<Outcome[]> =>
    inUnitOfWork(db, async () => {
      const found: Lookup[] = await records.lookUp(db, items.map((item) => item.claim));
      const fresh: { claim: Claim; answer: RecordedAnswer }[] = [];
      // Every handler settles before the transaction ends: none may still be writing when it rolls back.
      const settled = await Promise.allSettled(
        items.map(async ({ claim, exchange, next }, i): Promise<Outcome> => {
          const prior = found[i] ?? 'none';
          if (prior === 'held') return 'in_use';
          if (prior !== 'none') return prior.fingerprint === claim.fingerprint ? { result: replayOf(exchange.operation as Operation, prior.answer) } : 'reused';
          await next(exchange);
          if (exchange.result === undefined) throw new Error('exactly once: the handler gave no result');
          const { result, answer } = recorded(exchange.result);
          // A 5xx is the server's failure, not an answer to keep: the retry runs the handler again.
          if (answer.status < 500) fresh.push({ claim, answer });
          return { result };
        }),
      );
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      await records.record(db, fresh, new Date().toISOString());
      return settled.map((outcome) => (outcome as PromiseFulfilledResult<Outcome>).value);
    });

  const units = createBatcher<Item, Outcome>({
    maxBatch: 64,
    ...(onBatch ? { onBatch } : {}),
    writeBatch: serve,
    // A batch that failed (a handler's error, a key recorded meanwhile) is retried one by one:
    // one failure fails only its own request, and a key's retry sees the record that beat it.
    writeOne: async (item) => {
      try {
        return (await serve([item]))[0] as Outcome;
      } catch (error) {
        if (error instanceof KeyRecordedMeanwhile) return 'in_use';
        throw error;
      }
    },
    // When the database is down, retrying each item would only hammer it: all of them fail alike.
    retryOneByOne: (error) => !isDatabaseUnavailable(error),
  });

  // Keys whose request this instance is serving: a second request with one gets a 409 at once,
  // without a query. (Other instances: the advisory lock in ./records.ts.)
  const inFlight = new Set<string>();

  return {
    name: 'exactly once',
    run(exchange, next) {
      const { operation, request } = exchange;
      if (operation === undefined || request === undefined || !keyed.has(operation.operationId)) return next(exchange);
      const key = request.headers[HEADER];
      if (typeof key !== 'string') return next(exchange);
      // A public operation's keys are its callers' in common: without a caller there is no one else to keep them by.
      const claim: Claim = { caller: exchange.caller ?? '', operationId: operation.operationId ?? '', key, fingerprint: fingerprintOf(operation, { path: request.params, query: request.query as Record<string, unknown>, mediaType: exchange.mediaType, body: request.requestBody }) };
      const slot = slotOf(claim);
      if (inFlight.has(slot)) throw refuse('idempotency_key_in_use', 'inFlight');
      inFlight.add(slot);
      return units
        .add({ claim, exchange, next })
        .then((outcome) => {
          if (outcome === 'in_use') throw refuse('idempotency_key_in_use', 'inFlight');
          if (outcome === 'reused') throw refuse('idempotency_key_reused', 'otherRequest');
          exchange.result = outcome.result;
        })
        .finally(() => inFlight.delete(slot));
    },
  };
}
