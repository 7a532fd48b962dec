/**
 * The drain before a stop, and when there is one. On SIGTERM or SIGINT a server behind a balancer
 * must not vanish while the balancer still routes to it: `/readyz` answers 503 first, every
 * answer carries `Connection: close` so pooled connections move off, and only after a window long
 * enough for the balancer to see the 503 its `fall` number of times does the listener close
 * (../server.ts does the steps; ./app.ts answers /readyz from this state; ./listen.ts closes
 * connections).
 *
 * Why the drain happens only when `/readyz` was asked within PROBED_WITHIN_MS. The anchors differ
 * on what a server that nobody routes by should do. lightship fails readiness and waits
 * `shutdownDelay` (5 s by default) before its shutdown handlers, but only when it detects
 * Kubernetes (KUBERNETES_SERVICE_HOST); elsewhere the delay is 0. That guess misses HAProxy,
 * nginx or a cloud balancer on plain machines, exactly where the issue's failures were measured.
 * @godaddy/terminus waits for nothing unless the application writes a `beforeShutdown` that
 * sleeps, so every deployment must remember to add one, and the same sleep then holds up a
 * developer's Ctrl-C. What the delay is for is a prober: something that routes by our readiness
 * and must see it fail before we close. Whether one exists is known here, without a guess about
 * the platform: it asks `/readyz`. Kubernetes' kubelet (periodSeconds 10 by default), HAProxy's
 * `option httpchk` (2 s), cloud balancers (5–30 s) all ask within a minute; `npm run dev`, the
 * sandbox, a Ctrl-C in a terminal and the tests that stop servers never ask, so they stop at once.
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
  /** Since the latest /readyz, in whole ms; undefined when it was never asked. */
  probedAgoMs: number | undefined;
}

/** The drain for a stop now: `windowMs` when /readyz was asked within PROBED_WITHIN_MS, else none. */
export function planDrain(readiness: Readiness, windowMs: number, now = performance.now()): DrainPlan {
  const ago = now - readiness.lastProbeAt;
  const probedAgoMs = Number.isFinite(ago) ? Math.round(ago) : undefined;
  return { drainMs: probedAgoMs !== undefined && ago <= PROBED_WITHIN_MS ? windowMs : 0, probedAgoMs };
}
