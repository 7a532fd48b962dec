import type { Brownout } from './config.js';
import { isoInstant } from '../../shared/instant.js';
import type { OperationInfo } from '../../shared/spec.js';
import { refuse, type Refusal } from '../../errors/refusal.js';
import { setAhead } from '../../http/respond.js';
import type { Stage } from '../../http/stage.js';

/**
 * The deprecated operations, derived from the spec's own markers (`deprecated`, `x-deprecated-at`,
 * `x-sunset`, `x-replacement`), for every deprecated operation alike; a handler never sets any of it.
 * Two stages handle them, once a request is routed to one (deprecationStage, sunsetStage):
 * - Every answer of one carries `Deprecation` (RFC 9745, a structured-field date),
 *   `Sunset` (RFC 8594, an HTTP date) and `Link: <docs>; rel="deprecation"` (RFC 9745 §3): the
 *   operation's `externalDocs.url`, else its place in the docs this server serves (Redoc's anchor).
 * - Inside a brownout window (DEPRECATION_BROWNOUTS), and from its sunset instant on, it answers
 *   410 with a GoneError naming the replacement and the sunset date.
 */
export interface DeprecatedOperation {
  operationId: string;
  headers: Readonly<Record<string, string>>;
  /** `x-sunset` in ms since the epoch. */
  sunsetAt: number;
  /** `x-sunset` as the spec writes it (ISO 8601, UTC). */
  sunset: string;
  replacement: string;
}

/** The docs page the server serves (src/http/express.ts). */
const DOCS_PATH = '/docs';

function describe(op: OperationInfo): DeprecatedOperation {
  const sunsetAt = op.sunset ? Date.parse(op.sunset) : Number.NaN;
  const deprecatedAt = op.deprecatedAt ? Date.parse(op.deprecatedAt) : Number.NaN;
  // `npm run lint` (redocly.yaml: deprecation-complete, deprecation-dates) refuses a spec without them.
  if (Number.isNaN(sunsetAt) || Number.isNaN(deprecatedAt)) throw new Error(`${op.operationId}: x-deprecated-at or x-sunset is missing or not a date`);
  const docs = op.externalDocsUrl ?? `${DOCS_PATH}#tag/${encodeURIComponent(op.tag ?? '')}/operation/${encodeURIComponent(op.operationId)}`;
  return {
    operationId: op.operationId,
    headers: {
      Deprecation: `@${Math.floor(deprecatedAt / 1000)}`,
      Sunset: new Date(sunsetAt).toUTCString(),
      Link: `<${docs}>; rel="deprecation"; type="text/html"`,
    },
    sunsetAt,
    sunset: isoInstant(sunsetAt),
    replacement: op.replacement ?? 'the operations the docs name',
  };
}

/** Hears each call of a deprecated operation (the server counts them per key and in the metrics); `caller` undefined on a 401. */
export type DeprecatedCallListener = (operationId: string, caller: string | undefined, at: number) => void;

export class Deprecations {
  private readonly byOperation: ReadonlyMap<string, DeprecatedOperation>;

  constructor(
    operations: readonly OperationInfo[],
    private readonly brownouts: readonly Brownout[] = [],
  ) {
    this.byOperation = new Map(operations.filter((op) => op.deprecated).map((op) => [op.operationId, describe(op)]));
  }

  /** Whether the contract deprecates any operation: without one, the feature has no stage. */
  get any(): boolean {
    return this.byOperation.size > 0;
  }

  /** The deprecated operation, or undefined for one that is not. */
  get(operationId: string | undefined): DeprecatedOperation | undefined {
    return operationId === undefined ? undefined : this.byOperation.get(operationId);
  }

  /** The 410 a call of `op` gets at `now` (past its sunset, or in a brownout), or undefined. */
  refusal(op: DeprecatedOperation, now: number): Refusal | undefined {
    // On every call of a deprecated operation: nothing is built unless it is refused.
    const past = now >= op.sunsetAt;
    const brownout = past ? undefined : this.brownouts.find((window) => window.start <= now && now < window.end);
    if (!past && brownout === undefined) return undefined;
    const gone = { sunset: op.sunset, replacement: op.replacement };
    if (brownout === undefined) return refuse('operation_sunset', 'removed', op.operationId, gone);
    return refuse('operation_brownout', 'browningOut', op.operationId, isoInstant(brownout.end), gone);
  }
}

/**
 * Before the key check, since it needs only the operation: a routed call of a deprecated
 * operation carries its headers whatever answers it (its 401 too), and is heard with the caller
 * the key check found (none on a 401). The key check is synchronous, so once `next` has returned
 * or thrown, the caller is known: no listener per call on the path of getPet.
 */
export function deprecationStage(deprecations: Deprecations, onCall: DeprecatedCallListener): Stage {
  return {
    name: 'deprecation',
    run(exchange, next) {
      const op = deprecations.get(exchange.operation?.operationId);
      if (op === undefined) return next(exchange);
      const { headers } = op;
      for (const name in headers) setAhead(exchange, name, headers[name] as string);
      try {
        return next(exchange);
      } finally {
        onCall(op.operationId, exchange.caller, Date.now());
      }
    },
  };
}

/**
 * After the key check: a caller whose key passed gets the 410 of a brownout or a past sunset,
 * before the rate limit and the body cost anything; a stranger still gets its 401.
 */
export function sunsetStage(deprecations: Deprecations): Stage {
  return {
    name: 'sunset',
    run(exchange, next) {
      const op = deprecations.get(exchange.operation?.operationId);
      const gone = op === undefined ? undefined : deprecations.refusal(op, Date.now());
      if (gone !== undefined) throw gone;
      return next(exchange);
    },
  };
}
