/**
 * The framework and the drivers are adapters at the edge: handlers know neither HTTP nor SQL,
 * and each library is imported by the one folder that adapts it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = process.cwd();

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  // Static imports and dynamic import('…'): a driver loaded lazily is still imported.
  return [...text.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map((m) => m[1] ?? m[2] ?? '');
}

const runtime = [...sources('src'), ...sources('handlers')];

describe('architecture', () => {
  it('handlers import nothing but the typed contract (no Express, no SQL, no drivers)', () => {
    for (const file of sources('handlers')) {
      for (const spec of importsOf(file)) {
        expect(spec, `${file} imports ${spec}`).toMatch(/^(\.\/[A-Za-z]+\.js|\.\.\/src\/contract\.js)$/);
      }
      expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/\b(select|insert|update|delete)\s+(\*|into|from)\b/i);
    }
  });

  const owners: Array<[string, RegExp]> = [
    ['express', /^src\/http\//],
    ['openapi-backend', /^src\/http\//],
    ['kysely', /^src\/store\//],
    ['better-sqlite3', /^src\/store\/database\.ts$/],
    ['pg', /^src\/store\/database\.ts$/],
    ['pino', /^src\/logger\.ts$/],
  ];
  it.each(owners)('%s is imported only where it is adapted', (library, owner) => {
    const users = runtime.filter((file) => importsOf(file).some((s) => s === library || s.startsWith(`${library}/`)));
    expect(users.length).toBeGreaterThan(0);
    for (const file of users) expect(file, `${file} imports ${library}`).toMatch(owner);
  });
});
