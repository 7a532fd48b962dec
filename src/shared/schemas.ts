/**
 * The contract's data, as every layer sees it: the spec's schemas as TypeScript types, the Error
 * body, and JSON text the database serialised. It imports nothing of the project but the
 * generated types, so the store, the cursors, the handler contract and the HTTP side can all
 * build on it without importing one another.
 */
import type { components } from '../../generated/openapi.js';

export type Schemas = components['schemas'];
export type Pet = Schemas['Pet'];
export type PetStatus = Schemas['PetStatus'];
export type ErrorBody = Schemas['Error'];
export type ErrorCode = Schemas['ErrorCode'];
/** The Error body of the responses added in 1.1.0 (409, 422, 429), with codes of its own (spec: LimitError). */
export type LimitErrorBody = Schemas['LimitError'];
export type LimitErrorCode = Schemas['LimitErrorCode'];
/** The body of a deprecated operation's 410 (brownout or sunset), with the sunset date and the replacement (spec: GoneError). */
export type GoneErrorBody = Schemas['GoneError'];
export type GoneErrorCode = Schemas['GoneErrorCode'];
/** The Error body of 1.3.0's answers about an image's bytes (400 invalid_image, 416), with codes of its own (spec: MediaError). */
export type MediaErrorBody = Schemas['MediaError'];
export type MediaErrorCode = Schemas['MediaErrorCode'];

/**
 * Bytes a client sent: a raw body (`image/png`, `application/octet-stream`) or a file part of a
 * multipart body, read to its end within its limit (src/http/bodies/). Where the generated types
 * say `Blob` (a binary string of the spec), a handler gets one of these.
 */
export interface Upload {
  bytes: Buffer;
  size: number;
  /** As the client declared it, without parameters (busboy's `text/plain` for a part without a Content-Type). */
  mediaType: string;
  /** A file part's `filename`, without any path; undefined for a raw body. */
  fileName: string | undefined;
}

/**
 * Bytes a handler answers (an image, a file), with the media type the spec declares for that
 * status; the server sets Content-Type and Content-Length from it, and tags it like any other
 * answer of a conditional read (and answers its Range requests where the operation declares a
 * 206). `sha256`, the bytes' SHA-256 in hex when the caller has it stored, spares hashing them
 * again for the tag: it must be the digest of exactly `bytes`.
 */
export class BinaryBody<M extends string = string> {
  constructor(
    readonly bytes: Buffer,
    readonly mediaType: M,
    readonly sha256?: string,
  ) {}
}

/**
 * A body the database already serialised (a page of pets as `json_group_array`/`json_agg`): sent
 * as it is, never parsed and serialised again. `T` is what the text holds, so the handler map
 * still checks it against the spec; in test and dev the response check parses and validates it.
 */
export class JsonText<T> {
  declare readonly holds?: T;
  constructor(readonly text: string) {}
}

export function errorBody(status: number, code: ErrorCode, message: string, details?: ErrorBody['details']): ErrorBody {
  return details && details.length > 0 ? { code, message, status, details } : { code, message, status };
}

export function limitErrorBody(status: number, code: LimitErrorCode, message: string): LimitErrorBody {
  return { code, message, status };
}

export function mediaErrorBody(status: number, code: MediaErrorCode, message: string): MediaErrorBody {
  return { code, message, status };
}

export function goneErrorBody(status: number, code: GoneErrorCode, message: string, sunset: string, replacement: string): GoneErrorBody {
  return { code, message, status, sunset, replacement };
}
