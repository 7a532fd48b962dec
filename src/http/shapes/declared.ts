/**
 * The response an operation declares for an answer of a status, as OpenAPI resolves it: the
 * status's own, else its range's (`4XX`), else `default`. One lookup for every reader of it (the
 * error shape, the read view, the response check).
 */
export type DeclaredResponses<R = { content?: Readonly<Record<string, unknown>> }> = Readonly<Record<string, R | undefined>>;

export function declaredResponse<R>(responses: DeclaredResponses<R> | undefined, status: number): R | undefined {
  if (responses === undefined) return undefined;
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}
