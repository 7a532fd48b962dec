/**
 * Representations by content negotiation (RFC 9110 §12.5.1): an answer is written in the media
 * type its status declares (its own, its range's, `default`: ./declared.ts) that the request's
 * `Accept` prefers, q-values and wildcards weighed by the negotiator package, the first declared
 * when `Accept` is absent or allows none (an error is still answered; only the negotiate stage
 * refuses a request, with a 406, before any work is done). Where a status declares more than one,
 * the answer varies by `Accept` and says so (`Vary: Accept`). JSON (and every `+json` type) is
 * written by JSON.stringify; XML (`application/xml`, `text/xml`, every `+xml` type) by the
 * schema's `xml` objects (./xml.ts). Problem Details (`application/problem+json`,
 * `application/problem+xml`) are what an error becomes where one is chosen (./problems.ts).
 * Each choice is kept per declared response and `Accept` value, so an operation that declares one
 * media type pays a lookup.
 */
import Negotiator from 'negotiator';
import { JsonText } from '../../shared/schemas.js';
import { isBinary } from '../bodies/declared.js';
import { kindOf } from '../bodies/mediaType.js';
import { declaredResponse, type DeclaredResponses } from './declared.js';
import { asProblem, isErrorLike, PROBLEM_JSON, PROBLEM_XML } from './problems.js';
import { XmlWriter, type ComponentNames, type Schema } from './xml.js';

export interface Representation {
  /** As the spec declares it: a key of the response's `content`. */
  mediaType: string;
  /** The Content-Type header it is sent with. */
  contentType: string;
  kind: 'json' | 'xml';
  /** RFC 9457: an error body is written as Problem Details. */
  problem: boolean;
  schema: Schema | undefined;
}

/** Text already in its representation (a tagged answer's, whose ETag was taken from it), with the value it was written from. */
export class EncodedBody {
  constructor(
    readonly text: string,
    readonly contentType: string,
    readonly value: unknown,
  ) {}
}

export interface Chosen {
  representation: Representation;
  /** The status declares more than one representation: the answer carries `Vary: Accept`. */
  varies: boolean;
}

interface Offer {
  representations: readonly Representation[];
  types: string[];
  /** The choice per `Accept` value, bounded: a client that sends a new value each time cannot grow it. */
  byAccept: Map<string, Representation>;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const KEPT_ACCEPT_VALUES = 32;

/** Whether the negotiator can weigh a declared media type: a range (`image/*`) it cannot. */
const negotiable = (type: string): boolean => !type.includes('*');

/** `headers` with `Accept` added to their `Vary`: the answer's representation was chosen by it. */
export function varyingByAccept(headers: Readonly<Record<string, string>>): Record<string, string> {
  return { ...headers, Vary: headers.Vary === undefined ? 'Accept' : `${headers.Vary}, Accept` };
}

export function chooseMediaType(accept: string | undefined, types: string[]): string | undefined {
  if (accept === undefined) return types[0];
  return new Negotiator({ headers: { accept } }).mediaType(types);
}

function representationOf(mediaType: string, entry: unknown): Representation | undefined {
  const type = mediaType.toLowerCase();
  const kind = kindOf(type);
  if (kind !== 'json' && kind !== 'xml') return undefined;
  const schema = typeof entry === 'object' && entry !== null && 'schema' in entry ? (entry.schema as Schema) : undefined;
  // Bytes (a binary string) are the handler's to answer in their own media type.
  if (isBinary(schema)) return undefined;
  const contentType = type === 'application/json' ? JSON_CONTENT_TYPE : kind === 'xml' ? `${type}; charset=utf-8` : type;
  return { mediaType: type, contentType, kind, problem: type === PROBLEM_JSON || type === PROBLEM_XML, schema };
}

export class Representations {
  private readonly offers = new WeakMap<object, Map<number, Offer | null>>();
  private readonly xml: XmlWriter;

  /** `components`: the dereferenced spec's schemas, whose names XML gives root elements (a read or write view's twin by its schema's name: ./views.ts). */
  constructor(components: Readonly<Record<string, unknown>> | undefined) {
    const names = new Map<object, string>();
    for (const [name, schema] of Object.entries(components ?? {})) if (typeof schema === 'object' && schema !== null) names.set(schema, name.replace(/\.(?:read|write)$/, ''));
    this.xml = new XmlWriter(names as ComponentNames);
  }

  private offer(responses: DeclaredResponses, status: number): Offer | undefined {
    let byStatus = this.offers.get(responses);
    if (byStatus === undefined) this.offers.set(responses, (byStatus = new Map()));
    let offer = byStatus.get(status);
    if (offer === undefined) {
      const content = declaredResponse(responses, status)?.content ?? {};
      const representations = Object.entries(content).flatMap(([type, entry]) => representationOf(type, entry) ?? []);
      offer = representations.length === 0 ? null : { representations, types: representations.map((r) => r.mediaType), byAccept: new Map() };
      byStatus.set(status, offer);
    }
    return offer ?? undefined;
  }

  /**
   * The representation of an answer of `status` the operation declares (JSON, XML, Problem
   * Details), as `accept` prefers it; undefined where it declares none of them (no operation,
   * no content, bytes).
   */
  choose(responses: DeclaredResponses | undefined, status: number, accept: string | undefined): Chosen | undefined {
    if (responses === undefined) return undefined;
    const offer = this.offer(responses, status);
    if (offer === undefined) return undefined;
    const { representations } = offer;
    const first = representations[0] as Representation;
    if (representations.length === 1) return { representation: first, varies: false };
    if (accept === undefined) return { representation: first, varies: true };
    let chosen = offer.byAccept.get(accept);
    if (chosen === undefined) {
      const type = chooseMediaType(accept, offer.types);
      chosen = representations.find((r) => r.mediaType === type) ?? first;
      if (offer.byAccept.size >= KEPT_ACCEPT_VALUES) offer.byAccept.clear();
      offer.byAccept.set(accept, chosen);
    }
    return { representation: chosen, varies: true };
  }

  /**
   * `value` as the answer of `status` is sent: in the representation `accept` chose, as Problem
   * Details where that is one and the value an error (`instance`: the request's path), with the
   * media type it is checked as; undefined where the status declares none (sent as JSON).
   */
  written(responses: DeclaredResponses | undefined, status: number, accept: string | undefined, value: unknown, instance: () => string): { body: EncodedBody; mediaType: string; varies: boolean } | undefined {
    const chosen = this.choose(responses, status, accept);
    if (chosen === undefined) return undefined;
    const { representation } = chosen;
    const sent = representation.problem && status >= 400 && isErrorLike(value) ? asProblem(value, instance()) : value;
    return { body: new EncodedBody(this.encode(representation, sent), representation.contentType, sent), mediaType: representation.mediaType, varies: chosen.varies };
  }

  /** A value as text of its representation. */
  private encode(representation: Representation, value: unknown): string {
    if (representation.kind === 'json') return value instanceof JsonText ? value.text : JSON.stringify(value);
    const plain: unknown = value instanceof JsonText ? JSON.parse(value.text) : value;
    return this.xml.document(plain, representation.schema, representation.problem);
  }
}

/**
 * The media types an operation answers with on success (every 2xx's, bytes' included), for the
 * negotiate stage's 406; undefined when it cannot be judged: no success content, or a declared
 * range (`image/*`) the negotiator cannot weigh.
 */
export function successMediaTypes(responses: DeclaredResponses | undefined): string[] | undefined {
  const types = new Set<string>();
  for (const [status, response] of Object.entries(responses ?? {})) {
    if (!/^2(?:\d\d|XX)$/.test(status)) continue;
    for (const type of Object.keys(response?.content ?? {})) types.add(type.toLowerCase());
  }
  if (types.size === 0 || ![...types].every(negotiable)) return undefined;
  return [...types];
}
