/**
 * The typed client for frontend teams: openapi-fetch typed by the generated spec types, so a
 * wrong path, parameter or body field is a compile error. Works in browsers and in Node (it
 * uses the platform's fetch). Point it at the real server or at the Prism mock by base URL.
 *
 *   const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey });
 *   const { data, error } = await api.GET('/pets', { params: { query: { limit: 10 } } });
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from '../generated/openapi.js';

export type { components, paths };
export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ApiError = components['schemas']['Error'];
export type AnimalStoreClient = Client<paths, 'application/json'>;

export interface AnimalStoreClientOptions {
  /** The base URL including the version segment, e.g. `https://api.animal-store.example/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: ClientOptions['fetch'];
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions): AnimalStoreClient {
  const clientOptions: ClientOptions = {
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
  };
  if (options.fetch) clientOptions.fetch = options.fetch;
  return createClient<paths, 'application/json'>(clientOptions);
}

/** The `rel="next"` target of a Link header (RFC 8288), or undefined on the last page. */
export function nextLink(linkHeader: string | null): string | undefined {
  if (!linkHeader) return undefined;
  for (const part of linkHeader.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel="?next"?\s*(;|$)/i.test(match[2] ?? '')) return match[1];
  }
  return undefined;
}
