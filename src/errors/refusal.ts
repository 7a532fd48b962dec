/**
 * The one way to refuse a request. Whatever decides that a request gets an Error (a stage of the
 * request path, the key check, the body reader, Express's routes, node:http's parser) throws a
 * Refusal made by `refuse(code, condition, …)` from the catalog (./catalog.ts), and one place
 * turns it into the answer: Responder.sendError (src/http/respond.ts), which also turns any other
 * thrown error into a 503 or a 500. As Fastify's setErrorHandler or Connexion's
 * add_error_handler, so the Error body, its headers and what happens to an unread request body
 * are decided once. A handler answers an Error as one of its typed results: errorResult.
 */
import { errorBody, goneErrorBody, limitErrorBody, mediaErrorBody, type ErrorBody, type GoneErrorBody, type GoneErrorCode, type LimitErrorBody, type LimitErrorCode, type MediaErrorBody, type MediaErrorCode } from '../shared/schemas.js';
import { CATALOG, type Catalog, type Code, type Condition, type ConditionArgs, type Detail, type Entry, type Gone, type Headers, type StatusOf, type Wording } from './catalog.js';

export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
    /** Headers the answer carries besides the exchange's own: the code's, then the condition's. */
    readonly headers: Headers | undefined,
    /** Per-field details of a 400 (the Error body's `details`). */
    readonly details: Detail[] | undefined,
    readonly gone: Gone | undefined,
  ) {
    // No stack trace: a refusal is an answer, not a failure, and nobody reads where it was thrown;
    // capturing one through every stage's frame was most of a 400's cost (docs/performance.md).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'Refusal';
  }

  /** The body the catalog declares for its code: an Error, a LimitError, a GoneError or a MediaError. */
  body(): ErrorBody | LimitErrorBody | GoneErrorBody | MediaErrorBody {
    return bodyOf(this.code, this.status, this.message, this.details, this.gone);
  }
}

function bodyOf(code: Code, status: number, message: string, details: Detail[] | undefined, gone: Gone | undefined): ErrorBody | LimitErrorBody | GoneErrorBody | MediaErrorBody {
  switch (CATALOG[code].body) {
    case 'LimitError':
      return limitErrorBody(status, code as LimitErrorCode, message);
    case 'MediaError':
      return mediaErrorBody(status, code as MediaErrorCode, message);
    case 'GoneError':
      return goneErrorBody(status, code as GoneErrorCode, message, gone?.sunset ?? '', gone?.replacement ?? '');
    case 'Error':
      return errorBody(status, code as ErrorBody['code'], message, details);
  }
}

function headersOf(code: Code, own: Headers | undefined): Headers | undefined {
  const entry: Entry = CATALOG[code];
  if (entry.headers === undefined) return own;
  return own === undefined ? entry.headers : { ...entry.headers, ...own };
}

/** The Refusal of one of the catalog's conditions: `refuse('not_found', 'noSuchPath', path)`. */
export function refuse<C extends Code, K extends Condition<C>>(code: C, condition: K, ...args: ConditionArgs<C, K>): Refusal {
  const say = (CATALOG[code].says as Record<string, (...a: ConditionArgs<C, K>) => Wording>)[condition];
  if (say === undefined) throw new Error(`the error catalog has no condition ${condition} for ${code}`);
  const wording = say(...args);
  if (typeof wording === 'string') return new Refusal(CATALOG[code].statuses[0], code, wording, headersOf(code, undefined), undefined, undefined);
  return new Refusal(wording.status ?? CATALOG[code].statuses[0], code, wording.message, headersOf(code, wording.headers), wording.details, wording.gone);
}

/** A 400 naming each field that failed (its message sums them up). */
export function invalidFields(details: Detail[]): Refusal {
  return refuse('validation_failed', 'fields', details);
}

type BodyFor<C extends Code> = C extends LimitErrorCode ? LimitErrorBody : C extends GoneErrorCode ? GoneErrorBody : C extends MediaErrorCode ? MediaErrorBody : ErrorBody;
/** The catalog's headers of a code, when it has any (a spec that declares the 409 declares its Retry-After). */
type HeadersFor<C extends Code> = Catalog[C] extends { headers: infer H } ? { headers: H } : { headers?: undefined };

/**
 * An Error as a handler's typed result (`return errorResult('not_found', 'No animal has id 3.')`):
 * the status and body the catalog gives the code, its headers (a 409's Retry-After), and the
 * handler's own sentence, which knows its resource.
 */
export function errorResult<C extends Exclude<Code, GoneErrorCode>>(code: C, message: string, details?: Detail[]): { status: StatusOf<C>; body: BodyFor<C> } & HeadersFor<C> {
  const status = CATALOG[code].statuses[0] as StatusOf<C>;
  const headers = headersOf(code, undefined);
  const result = { status, body: bodyOf(code, status, message, details, undefined) as BodyFor<C> };
  return (headers === undefined ? result : { ...result, headers }) as { status: StatusOf<C>; body: BodyFor<C> } & HeadersFor<C>;
}

/**
 * One of the catalog's conditions as a handler's typed result
 * (`return refusalResult('invalid_image', 'notThatImage', 'PNG')`): its status, body and headers,
 * worded where every other refusal of it is.
 */
export function refusalResult<C extends Exclude<Code, GoneErrorCode>, K extends Condition<C>>(code: C, condition: K, ...args: ConditionArgs<C, K>): { status: StatusOf<C>; body: BodyFor<C> } & HeadersFor<C> {
  const refusal = refuse(code, condition, ...args);
  const result = { status: refusal.status as StatusOf<C>, body: refusal.body() as BodyFor<C> };
  return (refusal.headers === undefined ? result : { ...result, headers: refusal.headers }) as { status: StatusOf<C>; body: BodyFor<C> } & HeadersFor<C>;
}
