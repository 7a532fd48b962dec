/**
 * A fresh checkout's first commands often meet on a new SQLite file: the server starting while an
 * operator makes a key, or two instances under a supervisor. Each process migrates the file at
 * its start (src/store/migrate.ts) in one write transaction begun up front, so the others wait
 * for it and find the work done. The processes here load everything first and then open the file
 * at one agreed instant, so their migrations overlap as they would at worst.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../generated/migrations.js';

const run = promisify(execFile);

/** Opens the file at `at` (ms since the epoch) and prints what its migrations applied. */
const OPEN_AT = `
const { openSqlite } = await import('./src/store/database.ts');
const { sql } = await import('kysely');
await new Promise((resolve) => setTimeout(resolve, Number(process.env.OPEN_AT) - Date.now()));
const handle = await openSqlite(process.env.SQLITE_PATH);
const { rows } = await sql\`select name from kysely_migration\`.execute(handle.db);
console.log(rows.length);
await handle.close();
`;

describe('processes opening one new SQLite file at once', () => {
  it('each opens it, and every migration is applied once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-starts-'));
    try {
      const env = { ...process.env, SQLITE_PATH: join(dir, 'store.sqlite'), OPEN_AT: String(Date.now() + 6_000) };
      const opens = await Promise.allSettled(
        Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', OPEN_AT], { env })),
      );
      expect(opens.filter((open) => open.status === 'rejected').map((open) => String((open as PromiseRejectedResult).reason))).toEqual([]);
      const counts = opens.map((open) => (open.status === 'fulfilled' ? Number(open.value.stdout.trim()) : -1));
      expect(counts).toEqual(counts.map(() => Object.keys(migrations).length));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
