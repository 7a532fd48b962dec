/**
 * The released contracts: every spec/released/<x.y.z>.json, by version. One listing for the
 * breaking-change gate (the releases of the newest major), `npm run release` (the newest, to
 * release after) and the docs (a page per release).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A version's major, minor and patch. */
export type Version = readonly [number, number, number];

export interface Release {
  /** `x.y.z`, as in the file's name. */
  version: string;
  parts: Version;
  /** The frozen, bundled contract. */
  file: string;
}

/** `x.y.z` as numbers: three numbers without leading zeros, no `v`, no suffix; else undefined. */
export function parseVersion(text: string): Version | undefined {
  const match = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Orders versions numerically (1.10.0 after 1.9.0). */
export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Every release in `folder` (spec/released/), newest first; a file not named x.y.z.json is not a release. */
export function releasesIn(folder: string): Release[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .flatMap((name) => {
      const version = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
      const parts = parseVersion(version);
      return parts ? [{ version, parts, file: join(folder, name) }] : [];
    })
    .sort((a, b) => compareVersions(b.parts, a.parts));
}
