/**
 * `npm run keys`, the API key CLI, as an operator runs it: a process on a SQLite file. In the
 * processes suite (`npm run test:processes`); the keys' effect on requests is in test/storage/auth.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm run keys (CLI, on a SQLite file)', () => {
  const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
  const keysCli = (dir: string, ...args: string[]) => run(tsx, ['scripts/operators/keys.ts', ...args], { env: { ...process.env, SQLITE_PATH: join(dir, 'keys.sqlite'), DATABASE_URL: '' } });

  it('create prints the key once as its last line; list shows ids and names, never keys; revoke marks it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-keys-'));
    try {
      const created = await keysCli(dir, 'create', 'frontend team');
      const key = created.stdout.trim().split('\n').at(-1) ?? '';
      expect(key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
      // When it starts working: running servers reload the keys every KEY_REFRESH_MS (2 s by default).
      expect(created.stderr).toContain('Running servers accept it within 2 s');
      const listed = await keysCli(dir, 'list');
      expect(listed.stdout).toMatch(/^1\s+frontend team\s+\d{4}-\d\d-\d\dT\S+\s+-\s+\(every scope\)$/m);
      expect(listed.stdout).not.toContain(key);
      expect(listed.stdout).not.toContain(key.slice(4, 20));
      const revoked = await keysCli(dir, 'revoke', '1');
      expect(revoked.stdout).toContain('Revoked key 1');
      expect((await keysCli(dir, 'list')).stdout).toMatch(/^1\s+frontend team\s+\S+\s+\d{4}-\d\d-\d\dT\S+\s+\(every scope\)$/m);
      await expect(keysCli(dir, 'revoke', '42')).rejects.toMatchObject({ code: 1 });
      await expect(keysCli(dir, 'create')).rejects.toMatchObject({ code: 2 });
      // A key that holds some scopes only (an operation's security lists them): shown in the list.
      const scoped = await keysCli(dir, 'create', 'web', '--scopes', 'pets:read,pets:write');
      expect(scoped.stderr).toContain('(scopes: pets:read pets:write)');
      expect((await keysCli(dir, 'list')).stdout).toMatch(/^2\s+web\s+\S+\s+-\s+pets:read pets:write$/m);
      await expect(keysCli(dir, 'create', 'odd', '--scopes', 'a"b')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--scopes takes scopes') });
      await expect(keysCli(dir, 'create', 'none', '--scopes')).rejects.toMatchObject({ code: 2 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
