/**
 * What the contract suite needs to know about the thing it tests: where it is, which key to
 * send, what it can do, and which documented differences it has. Nothing here starts anything.
 */
import { MOCK_DIFFERENCES, type MockDifference } from '../../scripts/lib/prismContract.js';

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
 * when the request fails for another reason. The mock's come from the one list that
 * `npm run mock -- --help` prints (scripts/lib/prismContract.ts).
 */
export const KNOWN_DIFFERENCES = { ...MOCK_DIFFERENCES } as const;

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

/**
 * The Prism mock (`npm run mock`): examples only, so no stateful check applies as such; every
 * difference `npm run mock -- --help` lists is asserted on it (test/quick/mock.test.ts checks that
 * targets.ts gives the mock exactly this profile).
 */
export const MOCK_PROFILE: Pick<ContractTarget, 'capabilities' | 'knownDifferences'> = {
  capabilities: { stateful: false },
  knownDifferences: new Set<KnownDifference>(Object.keys(MOCK_DIFFERENCES) as MockDifference[]),
};

/**
 * The sandbox (`npm run sandbox`): the real server's code on a throwaway store, so every check
 * applies, stateful ones included. Its one departure is on purpose: any non-empty bearer token is
 * accepted, so a frontend needs no key; a missing or malformed Authorization header still gets the
 * real 401.
 */
export const SANDBOX_PROFILE: Pick<ContractTarget, 'capabilities' | 'knownDifferences'> = {
  capabilities: { stateful: true },
  knownDifferences: new Set<KnownDifference>(),
};
