/**
 * Media types as the request path reads them: a request's `Content-Type` parsed (the
 * content-type package), what kind of body a media type is, and which of an operation's declared
 * media types a request's matches (exact first, then `type/*`, then `*` + `/*`, as OpenAPI's
 * "more specific wins").
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseContentType } from 'content-type';

/**
 * How a body is read (and an answer written): `json` (`application/json` and every `+json` type,
 * merge patches included), `xml` (`application/xml`, `text/xml` and every `+xml` type), `form`
 * (`application/x-www-form-urlencoded`), `multipart` (`multipart/form-data`), or `raw` (anything
 * else: `application/octet-stream`, `image/*`, `text/*`), kept as bytes.
 */
export type BodyKind = 'json' | 'xml' | 'form' | 'multipart' | 'raw';

export function kindOf(mediaType: string): BodyKind {
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType === 'application/xml' || mediaType === 'text/xml' || mediaType.endsWith('+xml')) return 'xml';
  if (mediaType === 'application/x-www-form-urlencoded') return 'form';
  if (mediaType === 'multipart/form-data') return 'multipart';
  return 'raw';
}

/** The request's media type without parameters, lower-cased, and its charset (lower-cased), or undefined when it has none or it does not parse. */
export function requestMediaType(req: IncomingMessage): { type: string; charset: string | undefined } | undefined {
  try {
    const { type, parameters } = parseContentType(req);
    return { type, charset: parameters.charset?.toLowerCase() };
  } catch {
    return undefined;
  }
}

/** Whether a media type matches a declared range (`image/png`, `image/*`, `*` + `/*`). */
export function inRange(type: string, range: string): boolean {
  if (range === type || range === '*/*') return true;
  return range.endsWith('/*') && type.startsWith(range.slice(0, -1));
}

/** The declared media type (a key of `content`) that `type` matches, the most specific first. */
export function matchDeclared(type: string, declared: readonly string[]): string | undefined {
  const lower = declared.map((range) => range.toLowerCase());
  const at = lower.indexOf(type);
  if (at !== -1) return declared[at];
  const sub = lower.findIndex((range) => range !== '*/*' && inRange(type, range));
  if (sub !== -1) return declared[sub];
  const any = lower.indexOf('*/*');
  return any === -1 ? undefined : declared[any];
}
