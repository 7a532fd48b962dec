/**
 * The drain before a stop, and when there is one. On SIGTERM or SIGINT a server behind a balancer
 * must not vanish while the balancer still routes to it: `/readyz` answers 503 first, every
 * answer carries `Connection: close` so pooled connections move off, and only after a window long
 * enough for the balancer to see the 503 its `fall` number of times does the listener close
 * (../server.ts does the steps; ../pipeline/probes.ts answers /readyz from this state; ./listen.ts closes
 * connections).
 *
 * When to drain. SHUTDOWN_DRAIN_MS set says it: that long (0: never). Unset, the server drains
 * DEFAULT_DRAIN_MS only when `/readyz` was asked within PROBED_WITHIN_MS. Why: the anchors differ
 * on what a server that nobody routes by should do. lightship fails readiness and waits
 * `shutdownDelay` (5 s by default) before its shutdown handlers, but only when it detects
 * Kubernetes (KUBERNETES_SERVICE_HOST); elsewhere the delay is 0. That guess misses HAProxy,
 * nginx or a cloud balancer on plain machines, exactly where the issue's failures were measured.
 * @godaddy/terminus waits for nothing unless the application writes a `beforeShutdown` that
 * sleeps, so every deployment must remember to add one, and the same sleep then holds up a
 * developer's Ctrl-C. What the delay is for is a prober: something that routes by our readiness
 * and must see it fail before we close. Whether one exists is known here, without a guess about
 * the platform: it asks `/readyz`. Kubernetes' kubelet (periodSeconds 10 by default), HAProxy's
 * `option httpchk` (2 s), cloud balancers (5–30 s) all ask within a minute by default; `npm run
 * dev`, the sandbox, a Ctrl-C in a terminal and the tests that stop servers never ask, so they stop
 * at once. A balancer that never asks (open-source nginx has only passive checks) still gains from
 * a drain, whose `Connection: close` empties its pool of connections to us before the close: the
 * operator sets SHUTDOWN_DRAIN_MS, and gets that drain whether probed or not.
 */

/** What `/readyz` and the shutdown share. One per running server. */
export interface Readiness {
  /** Set when the drain begins: /readyz answers 503 from then on. */
  draining: boolean;
  /** `performance.now()` of the latest /readyz request; -Infinity before the first. */
  lastProbeAt: number;
}

export function createReadiness(): Readiness {
  return { draining: false, lastProbeAt: Number.NEGATIVE_INFINITY };
}

/**
 * A prober this recent means something routes by readiness. A minute covers the usual probe
 * periods (Kubernetes 10 s, HAProxy 2 s, cloud balancers up to 30 s) with room for a missed probe.
 */
export const PROBED_WITHIN_MS = 60_000;

/** SHUTDOWN_DRAIN_MS's default: a balancer probing every 1–2 s with `fall 2` has seen the 503 twice by then. */
export const DEFAULT_DRAIN_MS = 5_000;

export interface DrainPlan {
  /** How long to keep serving before closing; 0: close at once. */
  drainMs: number;
  /** `configured`: SHUTDOWN_DRAIN_MS set (0: `disabled`); unset, `probed` or `not probed`. */
  why: 'configured' | 'disabled' | 'probed' | 'not probed';
  /** Since the latest /readyz, in whole ms; undefined when it was never asked. */
  probedAgoMs: number | undefined;
}

/**
 * The drain for a stop now: `configuredMs` (SHUTDOWN_DRAIN_MS) when set; unset, DEFAULT_DRAIN_MS
 * when /readyz was asked within PROBED_WITHIN_MS, else none.
 */
export function planDrain(readiness: Readiness, configuredMs: number | undefined, now = performance.now()): DrainPlan {
  const ago = now - readiness.lastProbeAt;
  const probedAgoMs = Number.isFinite(ago) ? Math.round(ago) : undefined;
  if (configuredMs !== undefined) return { drainMs: configuredMs, why: configuredMs > 0 ? 'configured' : 'disabled', probedAgoMs };
  const probed = probedAgoMs !== undefined && ago <= PROBED_WITHIN_MS;
  return { drainMs: probed ? DEFAULT_DRAIN_MS : 0, why: probed ? 'probed' : 'not probed', probedAgoMs };
}
