/**
 * Runs a property over generated cases with a replayable seed. The seed is fixed unless
 * FUZZ_SEED overrides it; each property derives its own from it, so one number replays the run.
 */
import fc from 'fast-check';
import { describeWire } from './cases.js';
import type { WireRequest } from './wire.js';

/** Fixed by default so CI runs are repeatable; FUZZ_SEED=<int> explores (and replays) others. */
export const DEFAULT_SEED = 20_251_121;

export function fuzzSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  if (!/^-?\d+$/.test(raw)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return Number(raw) | 0;
}

/** The seed of the property named `label`: the run seed mixed with the label, so properties differ. */
export function propertySeed(seed: number, label: string): number {
  let h = seed | 0;
  for (const c of label) h = (Math.imul(h, 31) + (c.codePointAt(0) ?? 0)) | 0;
  return h;
}

/**
 * fast-check prints counterexamples with their toString; a case with a 1 MiB body would print
 * all of it, so each case prints as its one-line description instead.
 */
function readable<T extends { family: string; wire: WireRequest }>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return arb.map((c) => Object.defineProperty(c, fc.toStringMethod, { value: () => `[${c.family}] ${describeWire(c.wire)}`, enumerable: false }));
}

export interface RunOptions {
  seed: number;
  numRuns: number;
}

export async function runCases<T extends { family: string; wire: WireRequest }>(label: string, arb: fc.Arbitrary<T>, check: (c: T) => Promise<void>, options: RunOptions): Promise<void> {
  const seed = propertySeed(options.seed, label);
  await fc.assert(
    fc.asyncProperty(readable(arb), check),
    // Shrinking re-sends requests to the live server: the time bound keeps a failing run from dragging on.
    { seed, numRuns: options.numRuns, endOnFailure: false, interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true },
  );
}
