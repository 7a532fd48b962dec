/**
 * A small HTTP/1.1 client over node:http for the robust tests: a request resolves only once the
 * whole response body has arrived (so "the client saw a 201" means it saw all of it), and a
 * transport failure rejects with the socket error's code.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { nextLink, type NewPet, type Pet } from '../../../client/index.js';

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
}

/** One request; `url` is absolute. */
export function send(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: Record<string, string> = {};
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

export function isPet(value: unknown): value is Pet {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Object.keys(v).sort().join(',') === 'categoryId,id,name,status' &&
    Number.isSafeInteger(v.id) &&
    (v.id as number) >= 1 &&
    typeof v.name === 'string' &&
    Number.isSafeInteger(v.categoryId) &&
    (v.categoryId as number) >= 1 &&
    (v.status === 'available' || v.status === 'pending' || v.status === 'sold')
  );
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

/** The pet the server must answer with (and store) for `sent`, given the id it assigned. */
export function expectedPet(id: number, sent: NewPet): Pet {
  return { id, name: sent.name, categoryId: sent.categoryId, status: sent.status ?? 'available' };
}

/**
 * The stored pets that break "stored exactly as some client sent it, once": a name no client sent
 * (every client body has a unique name), a name stored twice, or a pet that differs from its body.
 */
export function notAsSent(stored: readonly Pet[], sent: ReadonlyMap<string, NewPet>): Pet[] {
  const names = new Set<string>();
  return stored.filter((pet) => {
    const body = sent.get(pet.name);
    const duplicate = names.has(pet.name);
    names.add(pet.name);
    return duplicate || body === undefined || JSON.stringify(pet) !== JSON.stringify(expectedPet(pet.id, body));
  });
}
