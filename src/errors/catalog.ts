/**
 * The error catalog: every code the contract enumerates (`ErrorCode`, `LimitErrorCode`,
 * `GoneErrorCode`, `MediaErrorCode`), with the statuses it is sent with, the body schema it is sent in, the headers
 * every answer of it carries, and the server's own wording for each condition that raises it. As
 * Stripe's error codes page or Huma's problem types: a code, its status and its sentence are
 * decided here once, and test/quick/errorCatalog.test.ts checks this table against the spec's
 * enumerations and their descriptions. Whatever refuses a request names a code and a condition
 * (./refusal.ts, refuse); a handler answers one of these conditions as its typed result
 * (refusalResult), or names a code and says its own sentence about its resource (errorResult).
 *
 * The typed record below is the compile-time half of that check: a code added to the spec's
 * enumerations is a type error here until it has its entry.
 */
import type { ErrorBody, ErrorCode, GoneErrorCode, LimitErrorCode, MediaErrorCode } from '../shared/schemas.js';

export type Code = ErrorCode | LimitErrorCode | GoneErrorCode | MediaErrorCode;
export type Detail = NonNullable<ErrorBody['details']>[number];
export type Headers = Readonly<Record<string, string>>;
/** A GoneError's extra fields: the deprecated operation's sunset instant and its replacement. */
export interface Gone {
  sunset: string;
  replacement: string;
}

/** What a condition says: its message, and what it adds to the entry's status and headers. */
export type Wording = string | { message: string; status?: number; headers?: Headers; details?: Detail[]; gone?: Gone };

/** The spec's schema the body of a code is an instance of. */
export type BodySchema = 'Error' | 'LimitError' | 'GoneError' | 'MediaError';

export interface Entry {
  /** The statuses the code is sent with; the first is its own, the others a condition's. */
  readonly statuses: readonly [number, ...number[]];
  readonly body: BodySchema;
  /** Headers every answer with this code carries (a condition may add more, or replace these). */
  readonly headers?: Headers;
  /** The server's own conditions for the code, each with its sentence. */
  readonly says: Readonly<Record<string, (...args: never[]) => Wording>>;
}

/**
 * Bytes that are not the image their media type says (shared/images.ts checks the signature): one
 * condition, whose code is the one the operation's 400 declares (a form's field of createPet:
 * validation_failed with the field; putPetPhoto's whole body: invalid_image, a MediaError).
 */
const notTheImage = (format: string) => `is not a ${format} image: its first bytes are not the ${format} signature`;

const RETRY_SOON = { 'Retry-After': '1' } as const;

/** One sentence for a 400's message: the first field that failed, and how many more did. */
export function summariseDetails(details: readonly Detail[]): string {
  const first = details[0];
  if (!first) return 'The request is invalid.';
  const name = first.field ? `${first.in} field "${first.field}"` : `the ${first.in === 'body' ? 'request body' : first.in}`;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return `The request is invalid: ${name} ${first.message}${more}.`;
}

export const CATALOG = {
  validation_failed: {
    statuses: [400],
    body: 'Error',
    says: {
      fields: (details: Detail[]) => ({ message: summariseDetails(details), details }),
      notHttp: () => 'The request is not well-formed HTTP/1.1.',
      malformedMultipart: (problem: string) => ({ message: `The multipart body is malformed: ${problem}.`, details: [{ in: 'body', field: '', message: `is malformed multipart: ${problem}` }] }),
      namelessPart: () => ({
        message: 'A part of the multipart body has no name: each part needs Content-Disposition: form-data; name="…".',
        details: [{ in: 'body', field: '', message: 'has a part without a name' }],
      }),
      // A part of a form that is not the image its media type says; a whole body that is not answers invalid_image.
      notThatImage: (field: string, format: string) => ({ message: `The request is invalid: body field "${field}" ${notTheImage(format)}.`, details: [{ in: 'body', field, message: notTheImage(format) }] }),
      // The sandbox's own route (src/features/sandbox/sandbox.ts), outside the contract.
      sandboxEndpoint: (problem: string) => ({ message: `The endpoint cannot be subscribed: ${problem}.`, details: [{ in: 'query', field: 'url', message: problem }] }),
      repeatedField: (field: string) => ({ message: `The request is invalid: body field "${field}" is sent more than once; it takes one value.`, details: [{ in: 'body', field, message: 'is sent more than once; it takes one value' }] }),
    },
  },
  invalid_json: {
    statuses: [400],
    body: 'Error',
    says: {
      notUtf8: () => 'The request body is not valid UTF-8.',
      notJson: () => 'The request body is not valid JSON.',
      shorterThanDeclared: () => 'The request body is shorter than its Content-Length.',
      clientGone: () => 'The request body did not arrive: the client went away.',
    },
  },
  unauthorized: {
    statuses: [401],
    body: 'Error',
    says: {
      // RFC 6750 §3: the challenge names the error only when a credential was sent.
      noValidKey: (challenge: string) => ({ message: 'A valid API key is required.', headers: { 'WWW-Authenticate': challenge } }),
    },
  },
  insufficient_scope: {
    statuses: [403],
    body: 'Error',
    says: {
      // RFC 6750 §3.1: the challenge names the scopes the request needed.
      missingScopes: (challenge: string) => ({ message: 'The credential is valid but lacks a scope this operation requires.', headers: { 'WWW-Authenticate': challenge } }),
    },
  },
  not_found: {
    statuses: [404],
    body: 'Error',
    says: {
      noSuchPath: (path: string) => `No such path: ${path}`,
      trailingSlash: (path: string, canonical: string) => `No such path: ${path} (addresses have no trailing slash: ${canonical})`,
      docsNotBuilt: () => 'The docs are not built; run `npm run docs`.',
      noDocsVersion: (version: string) => `No docs for contract version ${version}.`,
      metricsOnly: () => 'This listener serves GET /metrics only.',
    },
  },
  method_not_allowed: {
    statuses: [405],
    body: 'Error',
    says: {
      notOnPath: (method: string, path: string, allow: string) => ({ message: `${method} is not allowed on ${path}; use ${allow}.`, headers: { Allow: allow } }),
    },
  },
  not_acceptable: {
    statuses: [406],
    body: 'Error',
    says: {
      noneAcceptable: (offered: readonly string[]) => `This operation answers ${offered.join(' or ')}; the request's Accept allows none of them.`,
    },
  },
  payload_too_large: {
    statuses: [413, 431],
    body: 'Error',
    says: {
      body: (limit: number) => `The request body is larger than ${limit} bytes.`,
      part: (name: string, limit: number) => `The part "${name}" of the request body is larger than ${limit} bytes.`,
      tooManyParts: (max: number) => `The request body has more parts than this operation takes (at most ${max}).`,
      head: (limitKiB: number) => ({ status: 431, message: `The request line and headers are larger than ${limitKiB} KiB.` }),
    },
  },
  unsupported_media_type: {
    statuses: [415],
    body: 'Error',
    says: {
      // The charset note only where it applies: raw bytes (application/octet-stream, image/*) have none.
      notAccepted: (accepted: readonly string[]) => {
        const xml = accepted.some((type) => /xml$/i.test(type));
        const text = xml || accepted.some((type) => /json$|^application\/x-www-form-urlencoded$|^multipart\/form-data$/i.test(type));
        return `The request body must be uncompressed ${accepted.join(' or ')}${text ? ` (JSON${xml ? ', XML' : ''} and forms in UTF-8)` : ''}.`;
      },
      partType: (name: string, type: string, accepted: readonly string[]) => `The part "${name}" of the request body is ${type}; it must be ${accepted.join(' or ')}.`,
    },
  },
  internal_error: {
    statuses: [500],
    body: 'Error',
    says: {
      unexpected: (requestId: string) => `An unexpected error occurred (request ${requestId}).`,
      breaksContract: (problems: readonly string[]) => `The server produced a response that breaks its contract: ${problems.join(' | ').slice(0, 1000)}`,
      sandboxReset: (requestId: string) => `The sandbox could not be reset (request ${requestId}).`,
      metrics: () => 'The metrics could not be collected.',
    },
  },
  not_implemented: {
    statuses: [501],
    body: 'Error',
    says: {
      noHandler: (operationId: string) => `${operationId} is in the contract but has no handler yet: run \`npm run generate\` to scaffold its handler in handlers/.`,
      stub: (operationId: string) => `${operationId} is in the contract but not implemented yet.`,
    },
  },
  service_unavailable: {
    statuses: [503, 408],
    body: 'Error',
    headers: RETRY_SOON,
    says: {
      database: () => 'The service is unavailable; retry later.',
      databaseUnreachable: () => 'The database cannot be reached.',
      keysUnchecked: () => 'API keys cannot be checked right now; retry later.',
      shuttingDown: () => 'The server is shutting down: send requests to another instance.',
      requestTimeout: () => ({ status: 408, message: 'The request did not arrive in time; the connection is closed. Retry on a new connection.' }),
    },
  },
  idempotency_key_in_use: {
    statuses: [409],
    body: 'LimitError',
    headers: RETRY_SOON,
    says: {
      inFlight: () => 'A request with this Idempotency-Key is still being served; retry in 1 second.',
    },
  },
  idempotency_key_reused: {
    statuses: [422],
    body: 'LimitError',
    says: {
      otherRequest: () => 'This Idempotency-Key was already used with a different request; use a new key for a different request.',
    },
  },
  rate_limited: {
    statuses: [429],
    body: 'LimitError',
    says: {
      overLimit: (message: string, retryAfterS: number) => ({ message, headers: { 'Retry-After': String(retryAfterS) } }),
    },
  },
  precondition_failed: {
    statuses: [412],
    body: 'LimitError',
    says: {
      changedSince: (what: string) => `${what} has changed since the ETag in If-Match; nothing was done.`,
    },
  },
  operation_brownout: {
    statuses: [410],
    body: 'GoneError',
    says: {
      browningOut: (operationId: string, until: string, gone: Gone) => ({
        message: `${operationId} is deprecated and is browned out until ${until} to make its callers notice; it will be removed on ${gone.sunset.slice(0, 10)}. Use ${gone.replacement} instead.`,
        gone,
      }),
    },
  },
  operation_sunset: {
    statuses: [410],
    body: 'GoneError',
    says: {
      removed: (operationId: string, gone: Gone) => ({ message: `${operationId} was removed on ${gone.sunset.slice(0, 10)} (its sunset date). Use ${gone.replacement} instead.`, gone }),
    },
  },
  invalid_image: {
    statuses: [400],
    body: 'MediaError',
    says: {
      notThatImage: (format: string) => `The request body ${notTheImage(format).replace(' image:', ' image;')}.`,
    },
  },
  range_not_satisfiable: {
    statuses: [416],
    body: 'MediaError',
    says: {
      pastTheEnd: (size: number) => ({
        message: size === 0 ? 'No range of the Range lies within an empty body; ask without Range.' : `No range of the Range lies within the ${size} bytes of the photo; ask for bytes 0 to ${size - 1}.`,
        headers: { 'Content-Range': `bytes */${size}` },
      }),
    },
  },
} as const satisfies { readonly [C in Code]: Entry };

export type Catalog = typeof CATALOG;
/** The conditions of a code. */
export type Condition<C extends Code> = keyof Catalog[C]['says'] & string;
/** What a condition's sentence is made from. */
export type ConditionArgs<C extends Code, K extends Condition<C>> = Catalog[C]['says'][K] extends (...args: infer A) => Wording ? A : never;
/** The status a code is sent with, as a literal type (a handler's typed result needs it). */
export type StatusOf<C extends Code> = Catalog[C]['statuses'][0];
