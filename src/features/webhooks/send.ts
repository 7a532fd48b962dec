/**
 * One webhook delivery attempt: a POST to the endpoint, connected to the address
 * ./address.ts checked, and what came of it. Everything that can go wrong on the network is an
 * outcome, never a thrown error, so the caller decides about retries from one value.
 *
 * The receiver is someone else's server, so nothing about it is trusted: it may never answer,
 * answer forever, or redirect to somewhere the store must not go. Hence one deadline for the whole
 * exchange, a bound on the body read, and no redirects (a 3xx is the receiver's answer, as
 * Standard Webhooks counts anything but a 2xx a failure).
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';

/** The receiver's answer, or why there was none. */
export type SendOutcome = { status: number; retryAfterMs: number | undefined; error: undefined } | { status: undefined; retryAfterMs: undefined; error: string };

/** Where to deliver: the endpoint's URL and the address resolveDeliveryAddress checked for it. */
export interface SendTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export interface SendRequest {
  /** The JSON payload, already serialized (the signature is over these exact bytes). */
  body: string;
  /** The webhook-id, webhook-timestamp and webhook-signature headers, and any others. */
  headers: Record<string, string>;
}

export interface SendOptions {
  /** The whole exchange, connection to the last byte read; 15 s by default (Standard Webhooks' suggestion). */
  timeoutMs?: number;
  /** Response body bytes read at most; the rest is never read. 64 KiB by default. */
  maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_RESPONSE_BYTES = 65_536;
const USER_AGENT = 'animal-store-webhooks/1';

const failed = (error: string): SendOutcome => ({ status: undefined, retryAfterMs: undefined, error });

/**
 * `Retry-After` in milliseconds from now: delay-seconds or an HTTP-date (one in the past is 0).
 * Undefined when absent or neither: a guess would make the caller wait for nothing.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isFinite(ms) ? ms : undefined;
  }
  // An HTTP-date starts with the day's name (all three of RFC 9110's forms do); Date.parse alone
  // would take "-5" or "1.5" as a year.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Every connection goes to the pinned address, whatever the name would resolve to now. Node asks
 * for a list when it races IPv4 and IPv6 (autoSelectFamily), a single address otherwise.
 */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** Short, and free of the URL: an error code (ECONNREFUSED, CERT_HAS_EXPIRED) when there is one. */
function errorText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'request failed';
}

/** Most receivers' connections kept open at once (each agent's idle sockets close after a while anyway). */
const MAX_AGENTS = 256;
const agents = new Map<string, HttpAgent>();

/**
 * A keep-alive agent per URL origin and pinned address: its connections were opened to that
 * address, so one is reused only by attempts that resolved to it (a name that now resolves
 * elsewhere gets a new agent, and the check of the new address). Reusing them spares each
 * delivery a TCP (and TLS) handshake.
 */
function agentFor(target: SendTarget): HttpAgent {
  const key = `${target.url.origin} ${target.address}`;
  let agent = agents.get(key);
  if (agent === undefined) {
    agent = target.url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 64 }) : new HttpAgent({ keepAlive: true, maxSockets: 64 });
    if (agents.size >= MAX_AGENTS) {
      const [oldestKey, oldest] = agents.entries().next().value as [string, HttpAgent];
      oldest.destroy();
      agents.delete(oldestKey);
    }
    agents.set(key, agent);
  }
  return agent;
}

function requestOptions(target: SendTarget, request: SendRequest): RequestOptions {
  const { url } = target;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    method: 'POST',
    hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: {
      ...request.headers,
      // After the caller's: these describe the bytes sent, whatever a header map says.
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)),
      'user-agent': USER_AGENT,
    },
    lookup: pinnedLookup(target.address, target.family),
    // The certificate is checked against the name, not the pinned address; an address is no SNI name (RFC 6066).
    ...(url.protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
    agent: agentFor(target),
  };
}

/**
 * POSTs the body to the target's URL over a connection to the target's address (TLS still checks
 * the URL's name) and reports the status and Retry-After, or an error: a network failure's code,
 * or `timed out after N s` when connecting, sending, the answer's head and its body (up to
 * maxResponseBytes, the rest discarded) took longer than timeoutMs. A redirect is not followed.
 * Never rejects.
 */
export function postEvent(target: SendTarget, request: SendRequest, options: SendOptions = {}): Promise<SendOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return new Promise((resolve) => {
    let outgoing: ClientRequest | undefined;
    let settled = false;
    // Settling also ends the exchange: nothing the receiver sends later is waited for or read.
    const settle = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outgoing?.destroy();
      resolve(outcome);
    };
    const deadline = setTimeout(() => settle(failed(`timed out after ${timeoutMs / 1000} s`)), timeoutMs);

    const answered = (response: IncomingMessage): void => {
      const status = response.statusCode ?? 0;
      const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      const done = (): void => settle({ status, retryAfterMs, error: undefined });
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxResponseBytes) {
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      // A body cut short (the receiver reset or closed early) is an exchange that did not finish.
      response.on('error', (error) => settle(failed(errorText(error))));
      response.on('close', () => settle(failed('ECONNRESET')));
      if (maxResponseBytes <= 0) {
        done();
        response.destroy();
      }
    };

    try {
      const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
      outgoing = send(requestOptions(target, request), answered);
      outgoing.on('error', (error) => settle(failed(errorText(error))));
      outgoing.end(request.body);
    } catch (error) {
      // A header value node refuses (a newline in it) throws before anything is sent.
      settle(failed(errorText(error)));
    }
  });
}
