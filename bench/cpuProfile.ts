/**
 * A V8 CPU profile (`node --cpu-prof`) as both profile readers take it: bench/profile.ts (time
 * per function and package) and bench/stageProfile.ts (time per stage of the request path).
 */

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  /** Microseconds on the monotonic clock that process.hrtime also reads. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export type ProfileNode = CpuProfile['nodes'][number];

/** The profile's call tree: each node by id, and each node's parent. */
export function callTree(profile: CpuProfile): { byId: Map<number, ProfileNode>; parent: Map<number, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { byId, parent };
}

/**
 * The samples taken inside `window` (µs on the monotonic clock, so start-up and shutdown are left
 * out), each with the time it stands for: the gap to the next sample.
 */
export function* samplesIn(profile: CpuProfile, window: { from: number; to: number }): Generator<{ id: number; us: number }> {
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < window.from || at > window.to) continue;
    yield { id: profile.samples[i]!, us: profile.timeDeltas[i + 1] ?? 0 };
  }
}
