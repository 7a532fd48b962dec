/** Delivery gives way to requests (./giveWay.ts): the limit halves under requests and a busy loop, and climbs back without either. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUSY_ABOVE, GIVE_WAY_EVERY_MS, giveWayToRequests, nextLimit } from './giveWay.js';

describe('giving way to requests', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('halves the limit, down to one, only while requests came and the loop was busy', () => {
    expect(nextLimit(16, 16, { busy: 0.95, requests: 40 })).toBe(8);
    expect(nextLimit(1, 16, { busy: 1, requests: 40 })).toBe(1);
    // Busy with deliveries alone (a backlog after a burst): no request waits, so no giving way.
    expect(nextLimit(16, 16, { busy: 1, requests: 0 })).toBe(16);
    expect(nextLimit(4, 16, { busy: BUSY_ABOVE - 0.01, requests: 40 })).toBe(6);
    expect(nextLimit(15, 16, { busy: 0.2, requests: 0 })).toBe(16);
    expect(nextLimit(1, 1, { busy: 0.2, requests: 0 })).toBe(1);
  });

  it('looks every interval at the requests seen since the last, and says when the limit rose', () => {
    vi.useFakeTimers();
    let busy = 1;
    const raised = vi.fn();
    const giveWay = giveWayToRequests(16, { utilization: () => busy, raised });
    const tick = (requests: number) => {
      for (let i = 0; i < requests; i++) giveWay.requestSeen();
      vi.advanceTimersByTime(GIVE_WAY_EVERY_MS);
      return giveWay.limit();
    };
    expect([tick(10), tick(10), tick(10), tick(10), tick(10)]).toEqual([8, 4, 2, 1, 1]);
    expect(raised).not.toHaveBeenCalled();
    busy = 0.3;
    expect([tick(10), tick(0)]).toEqual([3, 5]);
    expect(raised).toHaveBeenCalledTimes(2);
    busy = 1;
    expect([tick(0), tick(0), tick(0), tick(0), tick(0), tick(0)]).toEqual([7, 9, 11, 13, 15, 16]);
    giveWay.stop();
  });
});
