import type { OperationInfo } from '../spec.js';

/**
 * Response headers for deprecated operations, derived from the spec alone: `Deprecation`
 * (RFC 9745, a structured-field date) from `x-deprecated-at`, and `Sunset` (RFC 8594, an HTTP
 * date) from `x-sunset`. A handler never sets them.
 */
export function deprecationHeaders(operations: readonly OperationInfo[]): Map<string, Record<string, string>> {
  const byOperation = new Map<string, Record<string, string>>();
  for (const op of operations) {
    if (!op.deprecated) continue;
    const headers: Record<string, string> = {};
    if (op.deprecatedAt) headers.Deprecation = `@${Math.floor(Date.parse(op.deprecatedAt) / 1000)}`;
    if (op.sunset) headers.Sunset = new Date(op.sunset).toUTCString();
    if (Object.values(headers).some((v) => v.includes('NaN') || v === 'Invalid Date')) {
      throw new Error(`${op.operationId}: x-deprecated-at or x-sunset is not a date`);
    }
    byOperation.set(op.operationId, headers);
  }
  return byOperation;
}
