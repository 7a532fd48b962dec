/**
 * A seeded random source, so a failing run can be repeated: every test prints its seed, and
 * ROBUST_SEED=<seed> replays the same kill moments and payloads.
 */
export interface Random {
  seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(label: string): Random {
  const fromEnv = process.env.ROBUST_SEED;
  const seed = fromEnv && /^\d+$/.test(fromEnv) ? Number(fromEnv) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.info(`[${label}] random seed ${seed} (ROBUST_SEED=${seed} repeats this run)`);
  // mulberry32
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
  };
}
