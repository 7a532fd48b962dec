/**
 * Delivery gives way to requests. A delivery costs this instance's event loop more than the create
 * that emitted it (signing, an HTTP exchange, its claim and settle: docs/performance.md), so at full
 * concurrency under a burst of writes the dispatcher took a third of the loop from the requests.
 * While requests arrive and the loop is nearly always busy, the dispatcher halves the deliveries it
 * keeps in flight, down to one (a backlog still moves); once either stops, it climbs back to
 * WEBHOOKS_CONCURRENCY. What a burst leaves behind is delivered after it at full speed: with no
 * requests there is nothing to give way to, however busy the loop is with deliveries.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How often the limit is looked at, and over what window the loop's use is measured. */
export const GIVE_WAY_EVERY_MS = 100;
/** The event loop's share (busy time over the window) above which requests are waiting on deliveries. */
export const BUSY_ABOVE = 0.9;

/** The next limit on deliveries in flight: halved while requests came and the loop was busy, else raised by an eighth of `max` (at least one). */
export function nextLimit(limit: number, max: number, { busy, requests }: { busy: number; requests: number }): number {
  if (requests > 0 && busy >= BUSY_ABOVE) return Math.max(1, Math.floor(limit / 2));
  return Math.min(max, limit + Math.max(1, Math.ceil(max / 8)));
}

export interface GiveWay {
  /** Deliveries to keep in flight now. */
  limit(): number;
  /** A request arrived (the feature's stage calls it). */
  requestSeen(): void;
  stop(): void;
}

export interface GiveWayOptions {
  /** Busy share of the event loop since the last call (tests give their own). */
  utilization?: () => number;
  /** Called when the limit rose: the dispatcher fills the new room. */
  raised?: () => void;
}

/** The event loop's busy share since the previous call. */
function loopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

export function giveWayToRequests(max: number, { utilization = loopUtilization(), raised }: GiveWayOptions = {}): GiveWay {
  let limit = max;
  let requests = 0;
  const timer = setInterval(() => {
    const next = nextLimit(limit, max, { busy: utilization(), requests });
    requests = 0;
    const rose = next > limit;
    limit = next;
    if (rose) raised?.();
  }, GIVE_WAY_EVERY_MS);
  timer.unref();
  return {
    limit: () => limit,
    requestSeen() {
      requests++;
    },
    stop: () => clearInterval(timer),
  };
}
