/**
 * What tells a retry from a reuse of an `Idempotency-Key`: the request compared by value. The
 * body after validation (the spec's defaults applied, so `status` omitted equals `status:
 * available`; key order and whitespace never count), the path and query parameters the operation
 * declares, and the body's media type. Bytes (a raw body, a file part) count by their SHA-256.
 */
import { hash } from 'node:crypto';
import type { Operation } from 'openapi-backend';

/** JSON with every object's keys sorted, at any depth (absent fields left out, as JSON.stringify does); bytes as their digest. */
function canonicalJson(value: unknown): string {
  if (value instanceof Uint8Array) return JSON.stringify(`sha256:${hash('sha256', value, 'hex')}`);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  const fields = Object.keys(object)
    .filter((name) => object[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name])}`);
  return `{${fields.join(',')}}`;
}

const sha256 = (text: string): string => hash('sha256', text, 'hex');

/** The declared parameters of one location, as the router parsed and validation converted them. */
function declared(operation: Operation, where: 'path' | 'query', values: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === where && values[parameter.name] !== undefined) picked[parameter.name] = values[parameter.name];
  }
  return picked;
}

export interface FingerprintedRequest {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  mediaType: string | undefined;
  body: unknown;
}

/**
 * SHA-256 of the canonical JSON of the request's parts, the body among them by its own digest
 * (what 1.2.0 recorded for createPet, so its keys carried over: migration 0006).
 */
export function fingerprintOf(operation: Operation, request: FingerprintedRequest): string {
  return sha256(
    canonicalJson({
      body: request.body === undefined ? undefined : sha256(canonicalJson(request.body)),
      mediaType: request.mediaType,
      path: declared(operation, 'path', request.path),
      query: declared(operation, 'query', request.query),
    }),
  );
}
