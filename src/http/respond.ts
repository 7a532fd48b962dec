/**
 * The one way a response leaves the server (but the docs page and the raw contract): security
 * headers and a request id on every response, one log line when it finishes, and every JSON body
 * passed through the contract check before it is written.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_PREFIX, redactApiKeys } from '../auth/apiKey.js';
import type { ErrorBody, ErrorCode } from '../contract.js';
import { errorBody, JsonText } from '../contract.js';
import type { Logger } from '../logger.js';
import { isUnavailable } from '../store/database.js';
import type { ResponseChecker } from './responseChecker.js';

/** What a JSON API should send with every response: nothing cached, sniffed, framed or embedded. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};
const SECURITY_HEADER_LIST = Object.entries(SECURITY_HEADERS);

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Sets the security headers and the request id (the client's `X-Request-Id` when it is a sane
 * token that is not an API key, else a fresh UUID), and logs one line when the response has
 * been sent, with any key-shaped part of the path masked. Returns the id.
 */
export function beginResponse(req: IncomingMessage, res: ServerResponse, logger: Logger): string {
  const started = process.hrtime.bigint();
  const incoming = req.headers['x-request-id'];
  const reqId = typeof incoming === 'string' && REQUEST_ID.test(incoming) && !incoming.includes(API_KEY_PREFIX) ? incoming : randomUUID();
  for (const [name, value] of SECURITY_HEADER_LIST) res.setHeader(name, value);
  res.setHeader('X-Request-Id', reqId);
  // Checked once here, so a silenced log costs no listener per request.
  if (logger.isLevelEnabled('info')) {
    res.once('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const url = req.url ?? '';
      const query = url.indexOf('?');
      logger.info({ reqId, method: req.method, path: redactApiKeys(query === -1 ? url : url.slice(0, query)), status: res.statusCode, durationMs: Math.round(durationMs * 100) / 100 }, 'request');
    });
  }
  return reqId;
}

/** Writes a JSON body with its length (or none when `body` is undefined); nothing per request but the serialisation itself. */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  for (const name in headers) res.setHeader(name, headers[name] as string);
  res.statusCode = status;
  // A response the spec declares without content (204, say): no body, no media type.
  if (body === undefined) {
    res.end();
    return;
  }
  const payload = Buffer.from(body instanceof JsonText ? body.text : JSON.stringify(body), 'utf8');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', payload.length);
  res.end(payload);
}

export interface Responder {
  /** Sends a body through the contract check; a violation turns it into a 500. */
  send(res: ServerResponse, operationId: string | undefined, status: number, body: unknown, headers?: Record<string, string>): void;
  sendError(res: ServerResponse, status: number, code: ErrorCode, message: string, options?: { operationId?: string | undefined; details?: ErrorBody['details']; headers?: Record<string, string> }): void;
  /** A thrown error: 503 when the database is unavailable, otherwise a logged 500. */
  failure(res: ServerResponse, reqId: string, error: unknown, operationId?: string): void;
}

export function createResponder(checker: ResponseChecker, deprecations: ReadonlyMap<string, Record<string, string>>, logger: Logger): Responder {
  const send: Responder['send'] = (res, operationId, status, body, headers = {}) => {
    const deprecation = operationId === undefined ? undefined : deprecations.get(operationId);
    const all = deprecation ? { ...headers, ...deprecation } : headers;
    if (checker.enabled) {
      const request = res.req ? `${res.req.method ?? ''} ${res.req.url ?? ''}` : '';
      if (checker.check(operationId, status, body, all, request)) {
        writeJson(res, 500, errorBody(500, 'internal_error', 'The server produced a response that breaks its contract.'));
        return;
      }
    }
    writeJson(res, status, body, all);
  };
  const sendError: Responder['sendError'] = (res, status, code, message, options = {}) => {
    send(res, options.operationId, status, errorBody(status, code, message, options.details), options.headers);
  };
  return {
    send,
    sendError,
    failure(res, reqId, error, operationId) {
      if (isUnavailable(error)) {
        logger.warn({ reqId, err: error }, 'database unavailable');
        sendError(res, 503, 'service_unavailable', 'The service is unavailable; retry later.', { operationId, headers: { 'Retry-After': '1' } });
        return;
      }
      logger.error({ reqId, err: error }, 'unexpected failure');
      sendError(res, 500, 'internal_error', `An unexpected error occurred (request ${reqId}).`, { operationId });
    },
  };
}
