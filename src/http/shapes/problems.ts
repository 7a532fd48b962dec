/**
 * RFC 9457 Problem Details, the second error convention a spec may declare beside our `Error`:
 * where the representation chosen for a status (its own, else its range such as `4XX`, else
 * `default`: ./representations.ts) is `application/problem+json` or `application/problem+xml`,
 * every refusal and every error a handler answers for that status is written as a problem: `type` (one URI per catalog code), `title`
 * (the status's reason phrase), `status`, `detail` (the Error's message), `instance` (the request's
 * path), and the Error's other members (`code`, a 400's `details`, …) as extension members.
 */
import { STATUS_CODES } from 'node:http';

export const PROBLEM_JSON = 'application/problem+json';
export const PROBLEM_XML = 'application/problem+xml';
/** A problem's `type` is this and its code (`…/problems/not_found`); docs/contract.md lists them. */
export const PROBLEM_TYPE_BASE = 'https://animal-store.example/problems/';

type ErrorLike = { code: string; message: string; status: number } & Record<string, unknown>;

/** Whether a body is one of the catalog's error bodies (Error, LimitError, GoneError, MediaError): a code, a message, a status. */
export function isErrorLike(body: unknown): body is ErrorLike {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, status } = body as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && typeof status === 'number';
}

/** An error body as Problem Details of the request at `instance` (a path, without its query). */
export function asProblem(body: ErrorLike, instance: string): Record<string, unknown> {
  const { code, message, status, ...rest } = body;
  return { type: `${PROBLEM_TYPE_BASE}${code}`, title: STATUS_CODES[status] ?? 'Error', status, detail: message, instance, code, ...rest };
}
