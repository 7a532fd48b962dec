/**
 * `npm run build` (first step): the production server as one ES module, dist/server/server.mjs, with
 * its dependencies bundled in by esbuild. Node then reads one file instead of resolving and
 * compiling some 900 modules (Kysely alone is 279 files), which is most of a cold start.
 *
 * Left outside the bundle: better-sqlite3 (a native addon, loaded from node_modules) and
 * pg-native (an optional peer of pg that we do not use). The PostgreSQL driver is a separate
 * chunk, loaded only when DATABASE_URL is set. Types are not checked here: `npm run lint` does.
 */
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../src/shared/paths.js';
import { SERVER_BUNDLE } from './lib/bundle.js';
import { commandLine } from './lib/commandLine.js';

const outdir = join(projectRoot, 'dist', 'server');

commandLine(`Usage: npm run build

Bundles src/main.ts and everything it imports into ${relative(projectRoot, outdir)}/ (entry: server.mjs,
with source maps), then renders the docs (scripts/docs.ts). Run the result with
\`node dist/server/server.mjs\` (what \`npm start\` does).`);

rmSync(outdir, { recursive: true, force: true });
const started = performance.now();
// scripts/lib/bundle.ts's SERVER_BUNDLE says how and why; the server's own build adds source maps and the sizes.
const result = await build({ ...SERVER_BUNDLE, absWorkingDir: projectRoot, entryPoints: { server: 'src/main.ts' }, outdir, sourcemap: true, metafile: true });
const bytes = Object.entries(result.metafile.outputs)
  .filter(([file]) => file.endsWith('.mjs'))
  .reduce((sum, [, output]) => sum + output.bytes, 0);
console.log(`Bundled the server into ${relative(projectRoot, outdir)}/server.mjs (${(bytes / 1024 / 1024).toFixed(1)} MiB with its chunks) in ${Math.round(performance.now() - started)} ms.`);
