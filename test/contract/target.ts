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
 * fixed on our side. A check that names one runs as `it.fails` on a target that has it, so the
 * difference stays visible and the check turns red once the difference disappears.
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
