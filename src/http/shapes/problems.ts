/**
 * RFC 9457 Problem Details, the second error convention a spec may declare beside our `Error`:
 * where an operation declares `application/problem+json` (and no `application/json`) for a status
 * (its own, else its range such as `4XX`, else `default`), every refusal and every error a handler
 * answers for that status is written as a problem: `type` (one URI per catalog code), `title`
 * (the status's reason phrase), `status`, `detail` (the Error's message), `instance` (the request's
 * path), and the Error's other members (`code`, a 400's `details`, …) as extension members.
 */
import { STATUS_CODES } from 'node:http';
import { declaredResponse, type DeclaredResponses } from './declared.js';

export const PROBLEM_JSON = 'application/problem+json';
/** A problem's `type` is this and its code (`…/problems/not_found`); docs/contract.md lists them. */
export const PROBLEM_TYPE_BASE = 'https://animal-store.example/problems/';

type ErrorLike = { code: string; message: string; status: number } & Record<string, unknown>;

/** Whether the operation declares its answer of `status` as Problem Details. */
export function declaresProblem(responses: DeclaredResponses | undefined, status: number): boolean {
  const content = declaredResponse(responses, status)?.content;
  return content !== undefined && PROBLEM_JSON in content && !('application/json' in content);
}

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
