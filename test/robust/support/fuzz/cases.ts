/**
 * What a generated request is: the wire bytes, and what the contract says must come back. Valid
 * cases carry what was meant (the query, the pet, the id) so the answer can be compared with the
 * model; invalid cases carry the statuses the spec allows for that fault, and which field a 400
 * must name.
 */
import type { JsonValue } from './jsonText.js';
import type { WireRequest } from './wire.js';

export type Expectation =
  /** Must be refused with one of `statuses`; a 400 must name `field` when given; a 405 must list `allow`. */
  | { kind: 'reject'; statuses: readonly number[]; code?: string; field?: { in: string; name: string }; allow?: readonly string[] }
  /** The spec does not say how this must end: only the properties every response has apply. */
  | { kind: 'any' };

/**
 * A body sent to an operation that takes none (a GET): refused unread, a 400 whose details name
 * the body (`in: body`, field `''`, as for any body-level fault).
 */
export const bodyNotAllowed: Expectation = { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'body', name: '' } };

export interface InvalidCase {
  family: string;
  wire: WireRequest;
  expect: Expectation;
}

export interface ListQuery {
  /** Every query parameter sent but the cursor, by its spec name, as the value meant (not the text). */
  params: Record<string, JsonValue>;
  /** A cursor the server issued, with the position it stands for. */
  cursor?: IssuedCursor;
}

export interface IssuedCursor {
  cursor: string;
  status: string | undefined;
  afterId: number;
}

export interface ValidListCase {
  family: string;
  query: ListQuery;
  wire: WireRequest;
  /** How many `Link: rel="next"` hops to follow after the first page. */
  follow: number;
}

/** A valid createPet body as sent: every field it has (the spec's request schema says which). */
export type NewPetSent = Record<string, JsonValue | undefined> & { name: string };

export interface ValidCreateCase {
  family: string;
  pet: NewPetSent;
  wire: WireRequest;
}

export interface ValidGetCase {
  family: string;
  id: number;
  wire: WireRequest;
}

/** A readable one-line account of a request, for failure messages (bodies cut at 300 bytes). */
export function describeWire(wire: WireRequest): string {
  if (wire.transport === 'raw' && wire.rawBytes) return `raw ${JSON.stringify(wire.rawBytes.subarray(0, 400).toString('latin1'))}`;
  const headers = wire.headers.map(([n, v]) => `${n}: ${v.length > 80 ? `${v.slice(0, 80)}…(${v.length})` : v}`).join(' | ');
  const body = wire.body ? ` body(${wire.body.length} B)=${JSON.stringify(wire.body.subarray(0, 300).toString('utf8'))}` : '';
  return `${wire.method} ${wire.target.length > 300 ? `${wire.target.slice(0, 300)}…` : wire.target} [${headers}]${body}`;
}
