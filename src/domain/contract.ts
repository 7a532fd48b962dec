/**
 * The typed contract between the HTTP adapter and the handlers, derived from the generated
 * `operations`. A handler takes a typed request and returns one of the responses the spec
 * declares for its operation; the compiler rejects any other status or body shape, and the
 * handler map must have exactly one handler per operation.
 */
import type { $Read, $Write, operations, Readable } from '../../generated/openapi.js';
import type { ServedOperationId } from '../../generated/operationIds.js';
import type { CursorCodec } from './cursor.js';
import { errorResult, refusalResult } from '../errors/refusal.js';
import { FORMAT_NAMES, hasSignatureOf, isPhotoMediaType } from '../shared/images.js';
import { BinaryBody, type JsonText, type Upload } from '../shared/schemas.js';
import type { Stores } from '../../generated/stores.js';

// Handlers import this module alone (test/quick/architecture.test.ts): what they need of
// src/shared/schemas.ts, src/shared/images.ts and the error catalog (src/errors/) is passed on.
export { BinaryBody, errorResult, FORMAT_NAMES, hasSignatureOf, isPhotoMediaType, refusalResult };
export { applyMergePatch } from './mergePatch.js';
export { ifMatchMatches, jsonEntityTag } from './etag.js';
export type { PhotoMediaType } from '../shared/images.js';
export type { ErrorBody, ErrorCode, LimitErrorBody, LimitErrorCode, MediaErrorBody, MediaErrorCode, Schemas, Upload } from '../shared/schemas.js';

/** An operation the server serves: one under the spec's `paths` (a webhook's is in `operations` too, but is sent, not served). */
export type OperationId = ServedOperationId & keyof operations;

type Parameters<O extends OperationId> = operations[O]['parameters'];
type Part<P, K extends string> = P extends { [Key in K]?: infer V } ? ([V] extends [undefined] ? Record<string, never> : NonNullable<V>) : Record<string, never>;


/**
 * A request body as the handler has it: where the spec has a binary string (a `Blob` in the
 * generated types, as a browser sends it), the bytes that arrived; and its write view, without
 * what the spec marks readOnly (the server drops what a client sends of it: src/http/shapes/views.ts).
 */
export type Received<T> = T extends Blob
  ? Upload
  : T extends $Write<infer U>
    ? Received<U>
    : T extends ReadonlyArray<infer I>
      ? Received<I>[]
      : T extends object
        ? { [K in keyof T as NonNullable<T[K]> extends $Read<unknown> ? never : K]: Received<T[K]> }
        : T;

/** A declared media type as a request carries it: `image/*` covers `image/png`. */
type Carried<M> = M extends `${infer Type}/*` ? `${Type}/${string}` : M;

/** One of the bodies the operation declares, with its media type: a handler of several tells them apart by `mediaType`. */
type BodyOf<R> = R extends { content: infer C } ? { [M in keyof C]: { mediaType: Carried<M>; body: Received<C[M]> } }[keyof C] : never;
type NoBody = { mediaType: undefined; body: undefined };
type RequestBodies<O extends OperationId> = operations[O] extends { requestBody: infer R }
  ? [R] extends [never]
    ? NoBody
    : BodyOf<R>
  : operations[O] extends { requestBody?: infer R }
    ? [R] extends [never]
      ? NoBody
      : BodyOf<NonNullable<R>> | NoBody
    : NoBody;

/** A request as the handler sees it: validated against the spec, parameters converted to their types. */
export type HandlerRequest<O extends OperationId> = {
  path: Part<Parameters<O>, 'path'>;
  query: Part<Parameters<O>, 'query'>;
  /** Header parameters the spec declares, under the names it spells them with. */
  header: Part<Parameters<O>, 'header'>;
  cookie: Part<Parameters<O>, 'cookie'>;
  /**
   * Who is calling: an opaque id of the API key that passed the key check (never the key
   * itself), or undefined on an operation with `security: []`. What per-caller state is kept by.
   */
  caller: string | undefined;
} & RequestBodies<O>;

/**
 * Headers the server derives itself (deprecation from the spec, ETag from the answer's bytes,
 * rate limits from the limiter, Accept-Ranges and Content-Range where it answers byte ranges);
 * handlers never set them. A `Link` beside `Deprecation` is the
 * deprecation link (src/features/deprecation/); any other `Link` (a page's) is the handler's.
 */
type ServerHeaders = 'Deprecation' | 'Sunset' | 'WWW-Authenticate' | 'ETag' | 'RateLimit' | 'RateLimit-Policy' | 'Accept-Ranges' | 'Content-Range';

type DeclaredHeaders<R> = R extends { headers: infer H }
  ? { [K in keyof H as string extends K ? never : K extends ServerHeaders ? never : K extends 'Link' ? (H extends { Deprecation: string } ? never : K) : K]: H[K] }
  : Record<string, never>;

/** Statuses that the spec's `default` Error response covers for a handler. */
export type DefaultStatus = 501 | 503;

/**
 * What a handler may answer for a declared content, in its read view (no write-only property:
 * src/http/shapes/views.ts): a value (or JSON text the database serialised) that the server writes
 * as JSON or XML, whichever Accept chose (src/http/shapes/representations.ts), or bytes of a
 * declared binary media type.
 */
type Answered<C> = {
  [M in keyof C]: M extends 'application/problem+json' | 'application/problem+xml'
    ? Readable<C[M]> | ConvertedError
    : M extends 'application/json' | `${string}+json` | 'application/xml' | 'text/xml' | `${string}+xml`
      ? Readable<C[M]> | JsonText<Readable<C[M]>>
      : BinaryBody<Carried<M & string>>;
}[keyof C];

/** An Error of the catalog (errorResult's) where Problem Details are declared: the server writes it as one (src/http/shapes/problems.ts). */
type ConvertedError = { code: string; message: string; status: number };
type AnswerBody<R> = R extends { content: infer C } ? Answered<C> : undefined;

type ResultFor<R, S> = {
  status: S;
  body: AnswerBody<R>;
} & (keyof DeclaredHeaders<R> extends never ? { headers?: undefined } : { headers: DeclaredHeaders<R> });

type Responses<O extends OperationId> = operations[O]['responses'];

/** One of the responses the spec declares for operation O. */
export type HandlerResult<O extends OperationId> = {
  [S in keyof Responses<O>]: ResultFor<Responses<O>[S], S extends 'default' ? DefaultStatus : S>;
}[keyof Responses<O>];

/**
 * What a handler may use besides its request: the stores, nothing of HTTP. Each resource module
 * of src/store/resources/ is one store, `deps.<file name>` (`deps.pets`), found by `npm run generate`.
 */
export interface HandlerDeps extends Stores {
  cursors: CursorCodec;
  /** The API's base path (`/v1`), for links a handler returns. */
  basePath: string;
  /**
   * Runs `work` in one transaction: what the stores write inside it commits together or not at
   * all (src/store/queries/unitOfWork.ts). A request with an `Idempotency-Key` is served inside one already.
   */
  unitOfWork<T>(work: () => Promise<T>): Promise<T>;
}

export type Handler<O extends OperationId> = (request: HandlerRequest<O>, deps: HandlerDeps) => Promise<HandlerResult<O>>;

/** The handler map: exactly one handler for every operation in the spec. */
export type Handlers = { [O in OperationId]: Handler<O> };

/** The answer of a scaffolded handler that nobody has written yet. */
export function notImplemented(operationId: OperationId): ReturnType<typeof errorResult<'not_implemented'>> {
  return errorResult('not_implemented', `${operationId} is in the contract but not implemented yet.`);
}
