/**
 * Where migrations live: the store's own folder (the server's tables, every resource's) and the
 * `migrations/` folder of each feature that keeps a table of its own (exactly-once's records,
 * the deprecated calls), so a feature's schema sits beside its code. They run as one sequence,
 * in file-name order across the folders, so their four-digit numbers are one series.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface MigrationFile {
  /** The file name without `.ts`: the migration's name in Kysely's table, never changed once shipped. */
  name: string;
  /** Its folder, relative to src/: `store/migrations` or `features/<name>/migrations`. */
  folder: string;
}

/** A migration's file name: four digits, then lower-case words joined by `_`. */
export const MIGRATION_NAME = /^\d{4}_[a-z0-9_]+$/;

/** Every migration file under `srcDir` (the project's src/), in the order they run; none when the folders are absent (the built bundle). */
export function migrationFiles(srcDir: string): MigrationFile[] {
  const features = join(srcDir, 'features');
  const folders = [join(srcDir, 'store', 'migrations'), ...(existsSync(features) ? readdirSync(features).map((name) => join(features, name, 'migrations')) : [])];
  return folders
    .filter((folder) => existsSync(folder))
    .flatMap((folder) =>
      readdirSync(folder)
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
        .map((file) => ({ name: file.slice(0, -3), folder: relative(srcDir, folder).split('\\').join('/') })),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.folder.localeCompare(b.folder)));
}
