/**
 * Once per `npm run test:robust` (vitest.robust.config.ts), before any file: the robust tests start
 * the server that `npm start` ships (dist/server/server.mjs, see scripts/lib/bundle.ts), so it is
 * built here, or reused when it is newer than every source it was built from. A clean clone (CI)
 * has no dist/ and builds.
 */
import { ensureBundle } from '../../../scripts/lib/bundle.js';

export default async function setup(): Promise<void> {
  console.log(`robust tests: ${await ensureBundle()}`);
}
