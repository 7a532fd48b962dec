/**
 * What the contract suite needs to know about the thing it tests: where it is, which key to
 * send, what it can do, and which documented differences it has. Nothing here starts anything.
 */

export interface Capabilities {
  /**
   * A real implementation: it stores what it is sent and applies the service's own rules
   * (assigned ids, paging with cursors, the key store, body size limit, unknown parameters).
   * The Prism mock is not: it answers every valid request with the contract's examples. Checks
   * that need it are titled "[stateful]" and skipped where it is false.
   */
  stateful: boolean;
}

/**
 * Documented ways a target departs from the contract or from the real server that cannot be
 * fixed on our side. On a target that has one, the check that names it is replaced by a check of
 * the difference itself (suite.ts, `observeDifference`): it passes only while the target departs
 * exactly as described here, so it turns red when the difference disappears, when it changes, or
 * when the request fails for another reason.
 */
export const KNOWN_DIFFERENCES = {
  'prism-malformed-json-body':
    'Prism parses a JSON body before routing (micri json()), so a malformed body gets micri\'s own 400 {"error":{"code":"invalid_json",...}} instead of an Error body. Not reachable from the derived spec.',
  'prism-empty-query-value':
    'Prism treats an empty query value (`?limit=`, `?cursor=`) as absent and answers 200; the contract (integer limit, cursor minLength 1) and the real server make it a 400.',
  'prism-bearer-scheme-case':
    'Prism matches the scheme of `Authorization` case-sensitively ("Bearer" only); the real server, like RFC 7235, accepts any case ("bearer").',
} as const;

export type KnownDifference = keyof typeof KNOWN_DIFFERENCES;

export interface ContractTarget {
  /** Shown in test titles: sqlite, postgres, mock, prism-proxy. */
  name: string;
  /** Base URL of the API, ending with the version segment: `http://127.0.0.1:4010/v1`. */
  baseUrl: string;
  /** A key the target accepts, sent as `Authorization: Bearer <key>`. */
  key: string;
  capabilities: Capabilities;
  knownDifferences: ReadonlySet<KnownDifference>;
  /** How requests are sent; the Prism proxy run routes them through its validators. */
  fetch: typeof fetch;
}
