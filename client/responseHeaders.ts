/**
 * The `headers` of a per-operation method's result: the response headers its operation declares
 * for the status received (client/generated/operations.ts, from the spec), each parsed by its kind
 * (client/headerValues.ts) under a camelCase property. Types and reading come from the same table,
 * so a header added to the spec appears in both after `npm run generate`, with no code here.
 */
import { operationHeaders, type HeaderKind } from './generated/operations.js';
import { headerParsers, type HeaderFact, type KindValue } from './headerValues.js';

type Facts = typeof operationHeaders;
export type OperationId = keyof Facts;
/** The statuses an operation declares, as the spec writes them (`"200"`, `"4XX"`, `"default"`). */
export type DeclaredStatus<Id extends OperationId> = keyof Facts[Id] & string;
/** The statuses of an operation whose answers openapi-fetch gives as `data` (`response.ok`). */
export type SuccessStatus<Id extends OperationId> = Extract<DeclaredStatus<Id>, `2${string}`>;
/** The others, `default` and 304 included, which openapi-fetch gives as `error`. */
export type ErrorStatus<Id extends OperationId> = Exclude<DeclaredStatus<Id>, SuccessStatus<Id>>;

/** The value of one header: its kind's, narrowed to the relations or values the spec names. */
type ValueOf<F> = F extends { kind: 'link'; rels: readonly (infer R extends string)[] }
  ? { readonly [Rel in R]?: string }
  : F extends { kind: 'string'; values: readonly (infer V extends string)[] }
    ? V
    : F extends { kind: infer K extends HeaderKind }
      ? KindValue<K>
      : string;

/** Every property of any member of the union `U`. */
type AllKeys<U> = U extends unknown ? keyof U : never;
/** The properties `K` that some member of `U` lacks or does not require. */
type OptionalIn<U, K> = U extends unknown ? (K extends keyof U ? (U[K] extends { required: true } ? never : K) : K) : never;
type ValueIn<U, K> = U extends unknown ? (K extends keyof U ? ValueOf<U[K]> : never) : never;
/** One object type instead of an intersection, so that editors and errors show its members. */
type Flatten<T> = { [K in keyof T]: T[K] } extends infer O ? { [K in keyof O]: O[K] } : never;

/**
 * The headers of a response of any of the statuses whose facts are the union `U`: a header
 * required on every one of them is always there, any other may be missing. `Others` (the rest of
 * the operation's headers) are listed as never there, so that a union of two such types still
 * lets you read every header of the operation before narrowing the result.
 */
type HeadersOf<U, Others extends PropertyKey> = Flatten<
  { readonly [K in Exclude<AllKeys<U>, OptionalIn<U, AllKeys<U>>>]: ValueIn<U, K> } & {
    readonly [K in OptionalIn<U, AllKeys<U>>]?: ValueIn<U, K>;
  } & { readonly [K in Exclude<Others, AllKeys<U>>]?: never }
>;

/**
 * The parsed headers of an answer of `Id` with one of the statuses `S` (all of them by default).
 * `ResponseHeaders<'listPets', '304'>` is exact for a 304; a method's result gives
 * `ResponseHeaders<Id, SuccessStatus<Id>>` with `data`, and the `ErrorStatus` ones with `error`.
 */
export type ResponseHeaders<Id extends OperationId, S extends DeclaredStatus<Id> = DeclaredStatus<Id>> = HeadersOf<Facts[Id][S], AllKeys<Facts[Id][DeclaredStatus<Id>]>>;

type StatusFacts = Readonly<Record<string, HeaderFact>>;

/** The facts for a status: its own, else its range's (`4XX`), else `default`, else none. */
function factsFor(byStatus: Readonly<Record<string, StatusFacts>>, status: number): StatusFacts {
  return byStatus[String(status)] ?? byStatus[`${String(status).charAt(0)}XX`] ?? byStatus.default ?? {};
}

/** One header's value, or undefined when it is absent or not of its kind. */
function readHeader(response: Response, fact: HeaderFact): unknown {
  const field = response.headers.get(fact.header);
  if (field === null) return undefined;
  const parse = headerParsers[fact.kind] as (field: string, fact: HeaderFact, context: { url: string }) => unknown;
  try {
    return parse(field, fact, { url: response.url }) ?? undefined;
  } catch {
    // The parsers return undefined on bad input; this is the promise that none ever throws.
    return undefined;
  }
}

/** The declared headers of `response`, an answer of the operation `operationId`, parsed. */
export function readResponseHeaders<Id extends OperationId>(operationId: Id, response: Response): ResponseHeaders<Id> {
  const facts = factsFor(operationHeaders[operationId] as Readonly<Record<string, StatusFacts>>, response.status);
  const headers = Object.fromEntries(Object.entries(facts).map(([property, fact]) => [property, readHeader(response, fact)]));
  // The declared headers of the status received: a member of the union ResponseHeaders<Id> names.
  return headers as ResponseHeaders<Id>;
}
