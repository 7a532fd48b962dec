/**
 * The server with the upload fixture operations as a child process: ./uploadServer.ts bundled by
 * esbuild with scripts/build.ts's settings into dist/robust-fixtures/ (inside the project, where
 * the server finds its root, contract and docs, and better-sqlite3 in node_modules), run with the
 * node flags of npm start. Built once per test process; a build takes a second or two.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { npmStartCommand, root, SERVER_BUNDLE } from '../../../scripts/lib/bundle.js';
import { startBannerProcess, type ServerProcess, type Store } from './server.js';

const outdir = join(root, 'dist', 'robust-fixtures', String(process.pid));
let built: Promise<string> | undefined;

async function bundle(): Promise<string> {
  mkdirSync(outdir, { recursive: true });
  await build({ ...SERVER_BUNDLE, absWorkingDir: root, entryPoints: { 'upload-server': 'test/robust/support/uploadServer.ts' }, outdir });
  return join(outdir, 'upload-server.mjs');
}

/** The node arguments that start the fixture server: npm start's flags, then the bundle. */
export async function uploadServerArgs(): Promise<string[]> {
  built ??= bundle();
  return [...npmStartCommand().nodeArgs.slice(0, -1), await built];
}

/** Starts the server with the upload fixture operations on `store` (port 0, production mode). */
export async function startUploadServer(store: Store, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  return startBannerProcess(process.execPath, await uploadServerArgs(), store, extraEnv);
}

/** Removes this process's bundle (afterAll). */
export function removeUploadServerBundle(): void {
  rmSync(outdir, { recursive: true, force: true });
}
