/**
 * The one way to refuse a request. Whatever decides that a request gets an Error (openapi-backend's
 * hooks, the key check, the rate limit, the body reader, Express's routes) throws a Refusal, and
 * one place turns it into the answer: Responder.sendError (./respond.ts), which also turns any
 * other thrown error into a 503 or a 500. As Fastify's setErrorHandler or Connexion's
 * add_error_handler, so the Error body, its headers and what happens to an unread request body
 * are decided once. node:http's own parser refusals (./clientError.ts), which come before any
 * request exists, are Refusals too and share the body.
 */
import { errorBody, goneErrorBody, limitErrorBody, type ErrorBody, type ErrorCode, type GoneErrorBody, type GoneErrorCode, type LimitErrorBody, type LimitErrorCode } from '../schemas.js';

/**
 * The codes of the spec's LimitError body (409, 422, 429: added in 1.1.0 with their own enum, so
 * 1.0.0's Error codes stay exactly as released). Typed as a record of every LimitErrorCode: a code
 * added to the spec is a compile error here until it is listed.
 */
const LIMIT_ERROR_CODES: Readonly<Record<LimitErrorCode, true>> = { idempotency_key_in_use: true, idempotency_key_reused: true, rate_limited: true };

/** The codes of the spec's GoneError body (a deprecated operation's 410), likewise. */
const GONE_ERROR_CODES: Readonly<Record<GoneErrorCode, true>> = { operation_brownout: true, operation_sunset: true };

type Code = ErrorCode | LimitErrorCode | GoneErrorCode;

function isLimitErrorCode(code: Code): code is LimitErrorCode {
  return Object.hasOwn(LIMIT_ERROR_CODES, code);
}

function isGoneErrorCode(code: Code): code is GoneErrorCode {
  return Object.hasOwn(GONE_ERROR_CODES, code);
}

export interface RefusalOptions {
  /** Per-field details of a 400 (the Error body's `details`). */
  details?: ErrorBody['details'] | undefined;
  /** Headers the answer carries besides the exchange's own (Allow, WWW-Authenticate, Retry-After). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** A GoneError's sunset date and replacement (a deprecated operation's 410). */
  gone?: { sunset: string; replacement: string } | undefined;
}

export class Refusal extends Error {
  readonly details: ErrorBody['details'] | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly gone: RefusalOptions['gone'];

  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
    options: RefusalOptions = {},
  ) {
    super(message);
    this.name = 'Refusal';
    this.details = options.details;
    this.headers = options.headers;
    this.gone = options.gone;
  }

  /**
   * The body the contract declares for it: a LimitError for the codes of 1.1.0's limits (it has no
   * `details`), a GoneError for a deprecated operation's 410, else an Error.
   */
  body(): ErrorBody | LimitErrorBody | GoneErrorBody {
    if (isLimitErrorCode(this.code)) return limitErrorBody(this.status, this.code, this.message);
    if (isGoneErrorCode(this.code)) return goneErrorBody(this.status, this.code, this.message, this.gone?.sunset ?? '', this.gone?.replacement ?? '');
    return errorBody(this.status, this.code, this.message, this.details);
  }
}
