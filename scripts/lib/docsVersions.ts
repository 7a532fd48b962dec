/**
 * The contract versions the docs publish: every release frozen in spec/released/<x.y.z>.json,
 * newest first.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Release {
  version: string;
  /** The frozen, bundled contract. */
  file: string;
}

const RELEASE_FILE = /^(\d+)\.(\d+)\.(\d+)\.json$/;

/** A semantic version's x.y.z as numbers, for ordering. */
function parts(version: string): number[] {
  return version.split('.').map(Number);
}

/** Compares x.y.z versions numerically (1.10.0 after 1.9.0). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Every release in `folder` (spec/released/), newest first; files not named x.y.z.json are not releases. */
export function releasesIn(folder: string): Release[] {
  return readdirSync(folder)
    .filter((name) => RELEASE_FILE.test(name))
    .map((name) => ({ version: name.slice(0, -'.json'.length), file: join(folder, name) }))
    .sort((a, b) => compareVersions(b.version, a.version));
}
