/**
 * The typed client for frontend teams: openapi-fetch typed by the generated spec types, so a
 * wrong path, parameter or body field is a compile error. Works in browsers and in Node (it
 * uses the platform's fetch). Point it at the real server or at the Prism mock by base URL.
 *
 *   const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey });
 *   const { data, error } = await api.GET('/pets', { params: { query: { limit: 10 } } });
 *   const same = await api.listPets({ params: { query: { limit: 10 } } });
 *
 * Each operation is also a method named by its operationId (client/generated/operations.ts), so that an
 * editor can show its summary and strike a deprecated one through, with its sunset and replacement.
 * Its result adds `headers`: the response headers the operation declares, parsed and typed
 * (`etag`, `nextCursor`, `rateLimit`, `sunset`…; client/responseHeaders.ts).
 *
 * Bytes go up as a Blob (a File from an `<input type="file">` is one), sent with the Blob's own
 * type as Content-Type; and down with `parseAs: 'blob'` (or `'arrayBuffer'`):
 *
 *   await api.putPetPhoto({ params: { path: { petId: 1 } }, body: file });
 *   await api.putPetPhoto({ params: { path: { petId: 1 } }, body: new Blob([bytes], { type: 'image/png' }) });
 *   const { data: photo } = await api.getPetPhoto({ params: { path: { petId: 1 } }, parseAs: 'blob' });
 *
 * A form (`multipart/form-data`) is the operation's fields as an object, with that Content-Type:
 *
 *   await api.createPet({ body: { name: 'Biscuit', categoryId: 2, photo: file }, headers: { 'Content-Type': 'multipart/form-data' } });
 */
import createClient, { defaultBodySerializer, type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit, type ParseAs } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';
import { operationRoutes, type OperationMethods } from './generated/operations.js';
import { parseLinkTargets } from './linkHeader.js';
import { readResponseHeaders, type ErrorStatus, type OperationId, type ResponseHeaders, type SuccessStatus } from './responseHeaders.js';

export type { components, paths };
export type { DeclaredStatus, ErrorStatus, OperationId, ResponseHeaders, SuccessStatus } from './responseHeaders.js';
export type { RateLimit, RateLimitPolicy } from './headerValues.js';
export { verifyWebhook, webhookId, WebhookVerificationError, type VerifyWebhookOptions, type WebhookEvent, type WebhookHeaders, type WebhookName } from './webhooks.js';
export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/**
 * Any error body: 1.0.0's `Error`, or the `LimitError` of 1.1.0's 409, 422 and 429 (same fields,
 * codes of its own). Written so that the client of a release without `LimitError` (1.0.0) compiles.
 */
export type ApiError = components['schemas']['Error'] | (components['schemas'] extends { LimitError: infer L } ? L : never);

/*
 * Why the client is not openapi-fetch's `Client<paths>` as is: its methods infer the whole init
 * argument as a type parameter (`Init extends MaybeOptionalInit<…>`) and then add
 * `& { [key: string]: unknown }` to it. An argument that is the inferred type parameter has no
 * excess properties by construction, so `{ query: { limit: 5, staus: 'sold' } }` or a body with
 * `stauts` compiled whenever the object also held one declared key (openapi-fetch issue #2329,
 * openapi-ts/openapi-typescript#2864); only an object of undeclared keys alone failed (TypeScript's
 * weak-type check). Here the init parameter is the operation's own declared type, not inferred,
 * so TypeScript's excess-property check applies to every object literal in the call: params,
 * query, path, body and the top level. Only `parseAs` is inferred, on its own type parameter,
 * because the type of `data` depends on it. Same runtime object; only the types are narrower.
 */
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
/**
 * The media types whose bodies `data` and `error` are typed by: JSON and every `+json` type, so an
 * API that answers its errors as RFC 9457 Problem Details (`application/problem+json`) gets them
 * typed as its Problem schema, not as the map of its media types.
 */
type JsonMedia = `${string}/json` | `${string}/${string}+json`;
/** The paths of the spec that have an operation for `M`. */
export type PathsWithMethod<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
/** The declared init (params, body, fetch options) of the operation `M P`; `undefined` allowed when nothing in it is required. */
type DeclaredInit<P extends keyof paths, M extends HttpMethod> = MaybeOptionalInit<paths[P], M>;
/** The init argument, optional exactly when the operation requires neither params nor a body. */
type InitArgument<Init, A extends ParseAs> = undefined extends Init
  ? [init?: (Exclude<Init, undefined> & { parseAs?: A }) | undefined]
  : [init: Init & { parseAs?: A }];
/** The operation `M P` (openapi-fetch's response types want it as a record). */
type Operation<P extends keyof paths, M extends HttpMethod> = paths[P][M] extends infer O extends Record<string | number, unknown> ? O : never;
/** What a call of the operation `M P` resolves to. */
type Result<P extends keyof paths, M extends HttpMethod, A extends ParseAs> = Promise<FetchResponse<Operation<P, M>, { parseAs: A }, JsonMedia>>;
type ExactMethod<M extends HttpMethod> = <P extends PathsWithMethod<M>, A extends ParseAs = 'json'>(
  url: P,
  ...init: InitArgument<DeclaredInit<P, M>, A>
) => Result<P, M, A>;

/**
 * openapi-fetch's result with the operation's parsed response headers: those of its 2xx statuses
 * with `data`, those of its other statuses with `error` (so `if (res.data)` narrows both).
 */
export type WithHeaders<R, Id extends OperationId> = R extends { error: unknown }
  ? R & { headers: ResponseHeaders<Id, ErrorStatus<Id>> }
  : R & { headers: ResponseHeaders<Id, SuccessStatus<Id>> };

/** `api.<operationId>(init)`: the call `api.<METHOD>(path, init)` of the operation's route, with the same types, plus `headers`. */
type OperationMethod<Id extends OperationId, Route> = Route extends { method: infer M extends HttpMethod; path: infer P }
  ? P extends PathsWithMethod<M>
    ? <A extends ParseAs = 'json'>(...init: InitArgument<DeclaredInit<P, M>, A>) => Promise<WithHeaders<Awaited<Result<P, M, A>>, Id>>
    : never
  : never;
/**
 * One method per operation of the spec, by operationId. A homomorphic mapped type: each member
 * keeps its declaration in client/generated/operations.ts, so the operation's JSDoc (its summary, and
 * `@deprecated` with the sunset date and the replacement) is what editors show on the method.
 */
export type OperationClient = { [Id in keyof OperationMethods]: OperationMethod<Id, OperationMethods[Id]> };

/**
 * openapi-fetch's client for this spec, with exact (excess-property-checked) init arguments, plus
 * a method per operation (OperationClient). An operationId that names one of the methods below
 * would hide it: createAnimalStoreClient refuses it.
 */
export interface AnimalStoreClient extends OperationClient {
  GET: ExactMethod<'get'>;
  PUT: ExactMethod<'put'>;
  POST: ExactMethod<'post'>;
  DELETE: ExactMethod<'delete'>;
  OPTIONS: ExactMethod<'options'>;
  HEAD: ExactMethod<'head'>;
  PATCH: ExactMethod<'patch'>;
  TRACE: ExactMethod<'trace'>;
  request: <M extends HttpMethod, P extends PathsWithMethod<M>, A extends ParseAs = 'json'>(
    method: M,
    url: P,
    ...init: InitArgument<DeclaredInit<P, M>, A>
  ) => Promise<FetchResponse<Operation<P, M>, { parseAs: A }, JsonMedia>>;
  use: Client<paths, JsonMedia>['use'];
  eject: Client<paths, JsonMedia>['eject'];
}

interface CommonOptions {
  /** The base URL including the version segment, e.g. `https://api.animal-store.example/v1`. */
  baseUrl: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: ClientOptions['fetch'];
}

/**
 * The credential: an API key (`apiKey`, sent as `Authorization: Bearer <apiKey>`), or, for an API
 * whose security takes OAuth2 or OpenID Connect access tokens, `accessToken`: called before each
 * request for the token to send as `Authorization: Bearer <token>` (your OAuth library's, which
 * keeps it fresh).
 */
export type AnimalStoreClientOptions = CommonOptions & ({ apiKey: string; accessToken?: undefined } | { accessToken: () => string | Promise<string>; apiKey?: undefined });

const isBytes = (body: unknown): body is ArrayBuffer | ArrayBufferView => body instanceof ArrayBuffer || ArrayBuffer.isView(body);

/** Bodies openapi-fetch would turn into JSON text are sent as they are when they are bytes or a form. */
function bodySerializer(body: unknown, headers?: Headers | Record<string, string>): unknown {
  if (body instanceof Blob || body instanceof FormData || isBytes(body)) return body;
  // Its declared type takes the body alone; it reads the headers too (a form-urlencoded Content-Type).
  return (defaultBodySerializer as (body: unknown, headers?: unknown) => unknown)(body, headers);
}

/** Headers as a plain object (the client's DOM lib has no iterable Headers). */
function plain(headers: Headers): Record<string, string> {
  const all: Record<string, string> = {};
  headers.forEach((value, name) => (all[name] = value));
  return all;
}

/** The Content-Type an init's headers set, if any (any spelling, any form of HeadersInit). */
function contentTypeOf(headers: unknown): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  return new Headers(headers as HeadersInit).get('content-type') ?? undefined;
}

/**
 * A call's init as openapi-fetch sends it: a Blob goes with its own type as Content-Type (unless
 * one is given), and an object body with `Content-Type: multipart/form-data` becomes FormData
 * (a Blob field a file part), whose boundary the platform then writes into the Content-Type.
 */
function withBody(init: object | undefined): object | undefined {
  if (init === undefined || !('body' in init) || init.body === undefined) return init;
  const { body } = init;
  const headers = 'headers' in init ? init.headers : undefined;
  const type = contentTypeOf(headers);
  if (body instanceof Blob && type === undefined && body.type !== '') return { ...init, headers: { ...plain(new Headers((headers ?? {}) as HeadersInit)), 'Content-Type': body.type } };
  if (isBytes(body) && type === undefined) throw new TypeError('A body of bytes needs its media type: pass headers: { "Content-Type": "image/png" }, or send a Blob of that type.');
  if (type?.toLowerCase().startsWith('multipart/form-data') && typeof body === 'object' && body !== null && !(body instanceof FormData) && !(body instanceof Blob) && !isBytes(body)) {
    const form = new FormData();
    for (const [name, value] of Object.entries(body)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item instanceof Blob) form.append(name, item, item instanceof File ? item.name : name);
        else form.append(name, typeof item === 'string' ? item : JSON.stringify(item));
      }
    }
    const rest = new Headers((headers ?? {}) as HeadersInit);
    rest.delete('content-type');
    return { ...init, body: form, headers: plain(rest) };
  }
  return init;
}

type AnyCall = (url: string, init?: object) => Promise<unknown>;

export function createAnimalStoreClient(options: AnimalStoreClientOptions): AnimalStoreClient {
  const clientOptions: ClientOptions = {
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    ...(options.apiKey === undefined ? {} : { headers: { Authorization: `Bearer ${options.apiKey}` } }),
    bodySerializer: bodySerializer as ClientOptions['bodySerializer'],
  };
  if (options.fetch) clientOptions.fetch = options.fetch;
  const client = createClient<paths, JsonMedia>(clientOptions);
  const { accessToken } = options;
  if (accessToken !== undefined) {
    client.use({
      async onRequest({ request }) {
        request.headers.set('Authorization', `Bearer ${await accessToken()}`);
        return request;
      },
    });
  }
  // Every call's body goes through withBody first, whichever method makes it.
  const methods = client as unknown as Record<string, AnyCall> & { request: (method: string, url: string, init?: object) => Promise<unknown> };
  for (const name of ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']) {
    const call = methods[name] as AnyCall;
    methods[name] = (url, init) => call(url, withBody(init));
  }
  const rawRequest = methods.request;
  methods.request = (method, url, init) => rawRequest(method, url, withBody(init));
  // The table holds every route, so no one route's types apply here: OperationClient gives each
  // method its own when the object is cast below.
  const request = client.request as unknown as (method: HttpMethod, url: string, init?: object) => Promise<{ response: Response }>;
  const operations = Object.fromEntries(
    (Object.entries(operationRoutes) as [OperationId, (typeof operationRoutes)[OperationId]][]).map(([operationId, { method, path }]) => {
      if (operationId in client) throw new Error(`operationId ${operationId} is also a method of openapi-fetch's client`);
      const call = async (init?: object) => {
        const result = await request(method, path, init);
        return Object.assign(result, { headers: readResponseHeaders(operationId, result.response) });
      };
      return [operationId, call];
    }),
  );
  // openapi-fetch's object with a method per operation added. AnimalStoreClient only narrows the
  // argument types of its methods (TypeScript cannot prove a generic signature narrower than
  // another, hence the cast).
  return Object.assign(client, operations) as unknown as AnimalStoreClient;
}

/** The `rel="next"` target of a Link header (RFC 8288), as written, or undefined on the last page. */
export function nextLink(linkHeader: string | null): string | undefined {
  return linkHeader ? parseLinkTargets(linkHeader)?.next : undefined;
}
