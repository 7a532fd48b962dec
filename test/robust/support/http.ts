/**
 * A small HTTP/1.1 client over node:http for the robust tests: a request resolves only once the
 * whole response body has arrived (so "the client saw a 201" means it saw all of it), and a
 * transport failure rejects with the socket error's code.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { nextLink, type NewPet, type Pet } from '../../../client/index.js';
import { describeDifferences, expectedPet as roundTripExpectedPet, loadDocument, petContract, petDifferences, schemaErrors, serverAssignedFields, type PetRecord } from '../../support/roundTrip.js';

/** The bundled contract (generated/openapi.json), read once at test time. */
const contract = loadDocument();

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string,
    /** Whether a response status line had arrived before the failure. */
    readonly gotResponse: boolean,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  method?: string;
  key?: string;
  body?: unknown;
  agent?: Agent;
  timeoutMs?: number;
  /** More request headers (an Idempotency-Key, say). */
  headers?: Record<string, string>;
}

/** One request; `url` is absolute. */
export function send(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    let gotResponse = false;
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      gotResponse = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (!res.complete) {
          reject(new TransportError(`response to ${url} ended early`, 'INCOMPLETE', true));
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (error: NodeJS.ErrnoException) => reject(new TransportError(error.message, error.code ?? 'ERESPONSE', true)));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer from ${url} within the timeout`), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => reject(new TransportError(error.message, error.code ?? 'EREQUEST', gotResponse)));
    req.end(payload);
  });
}

/**
 * Whether `value` is a Pet as the spec's createPet 201 schema declares it: its `required` fields
 * present, no field the schema does not have, every value of the declared type and within bounds
 * (Ajv against the schema read from generated/openapi.json at test time).
 */
export function isPet(value: unknown): value is Pet {
  return schemaErrors(petContract(contract).createPet.response, value).length === 0;
}

/**
 * Every pet, by following `Link: rel="next"` from `GET /pets?limit=100` to the last page.
 * Bounded by `maxPages`; fails on any non-200 or on a page that is not a list of pets.
 */
export async function listAllPets(base: string, key: string, maxPages = 2_000): Promise<Pet[]> {
  const origin = new URL(base).origin;
  const pets: Pet[] = [];
  let url: string | undefined = `${base}/pets?limit=100`;
  for (let page = 0; url !== undefined; page++) {
    if (page >= maxPages) throw new Error(`more than ${maxPages} pages: the Link chain does not end`);
    const response = await send(url, { key });
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${response.text}`);
    const body = JSON.parse(response.text) as unknown;
    if (!Array.isArray(body) || !body.every(isPet)) throw new Error(`GET ${url} did not answer a list of pets: ${response.text.slice(0, 500)}`);
    pets.push(...body);
    const link = response.headers.link;
    const next = nextLink(typeof link === 'string' ? link : null);
    url = next === undefined ? undefined : new URL(next, origin).toString();
  }
  return pets;
}

/**
 * The pet the server must answer with (and store) for `sent`, given the id it assigned: every sent
 * field the response declares, the spec's default for each absent optional field, and `id`
 * (test/support/roundTrip.ts; keys in the schema's property order).
 */
export function expectedPet(id: number, sent: NewPet): Pet {
  return roundTripExpectedPet(id, sent as unknown as PetRecord, contract) as unknown as Pet;
}

/** The fields in which `pet` differs from what `sent` must have stored, one line each (empty: none). */
export function petProblems(pet: unknown, sent: NewPet): string[] {
  const id = typeof pet === 'object' && pet !== null ? (pet as { id?: unknown }).id : undefined;
  if (typeof id !== 'number') return [`not a pet with an id: ${JSON.stringify(pet)}`];
  return describeDifferences(`pet ${id}`, petDifferences(expectedPet(id, sent) as unknown as PetRecord, pet, serverAssignedFields(contract)));
}

/**
 * The stored pets that break "stored exactly as some client sent it, once": a name no client sent
 * (every client body has a unique name), a name stored twice, or a pet that differs from its body
 * in any field (the whole object is compared, every field the spec declares).
 */
/** Whether `value` is the pet the server should have stored for `sent`: the whole object, key order aside. */
export function isPetAsSent(value: unknown, sent: NewPet): value is Pet {
  return isPet(value) && petProblems(value, sent).length === 0;
}

export function notAsSent(stored: readonly Pet[], sent: ReadonlyMap<string, NewPet>): Pet[] {
  const names = new Set<string>();
  return stored.filter((pet) => {
    const body = sent.get(pet.name);
    const duplicate = names.has(pet.name);
    names.add(pet.name);
    return duplicate || body === undefined || petProblems(pet, body).length > 0;
  });
}
