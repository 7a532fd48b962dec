/**
 * A throwaway copy of the project, for tests that change it as a user would (edit the spec, run
 * `npm run generate`, write handlers, run the compiler and the server) without touching the real
 * working tree. The copy holds every file git would consider part of the project as it is on disk
 * now (tracked and untracked-but-not-ignored, so uncommitted work is included and `node_modules`,
 * `dist/` and `data/` are not), and a symlink to the project's node_modules.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real project's root folder. */
export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ProjectCopy {
  /** The copy's root folder. */
  dir: string;
  /** A path inside the copy. */
  path(...parts: string[]): string;
  read(file: string): string;
  write(file: string, text: string): void;
  /** Rewrites a file of the copy through `change`. */
  edit(file: string, change: (text: string) => string): void;
  /** A binary of the project's node_modules/.bin (through the copy's symlink). */
  bin(name: string): string;
  /** Deletes the copy (never the node_modules it links to). */
  remove(): void;
}

/** The project's files as git sees them in the working tree: tracked, plus untracked ones that are not ignored. */
export function projectFiles(root = projectRoot): string[] {
  let listing: string;
  try {
    listing = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`copyProject needs git to list the project's files: ${error instanceof Error ? error.message : String(error)}`);
  }
  // A tracked file deleted in the working tree is not part of what the user has now.
  return [...new Set(listing.split('\0').filter((file) => file !== ''))].filter((file) => existsSync(join(root, file)) && statSync(join(root, file)).isFile());
}

export function copyProject(prefix = 'animal-store-copy-', root = projectRoot): ProjectCopy {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    for (const file of projectFiles(root)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(root, file), join(dir, file));
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const path = (...parts: string[]) => join(dir, ...parts);
  return {
    dir,
    path,
    read: (file) => readFileSync(path(file), 'utf8'),
    write: (file, text) => {
      mkdirSync(dirname(path(file)), { recursive: true });
      writeFileSync(path(file), text);
    },
    edit(file, change) {
      this.write(file, change(this.read(file)));
    },
    bin: (name) => path('node_modules', '.bin', name),
    // rmSync does not follow the node_modules symlink: it removes the link only.
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * `text` with `find` replaced by `replacement`, when `find` occurs exactly once; otherwise an
 * error saying which edit of which file no longer applies (the file changed under the test).
 */
export function replaceOnce(text: string, find: string, replacement: string, what: string): string {
  const first = text.indexOf(find);
  if (first === -1) throw new Error(`${what}: the text to replace is not there any more:\n${find}`);
  if (text.indexOf(find, first + find.length) !== -1) throw new Error(`${what}: the text to replace occurs more than once:\n${find}`);
  return text.slice(0, first) + replacement + text.slice(first + find.length);
}

export interface CommandResult {
  /** The exit code (null when killed by a signal or not started). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time, milliseconds. */
  ms: number;
}

/** Runs a command to completion; never rejects: a failure is in `code` and the output. */
export function runCommand(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null) : 0;
        const extra = error && code === null ? `\n[${error.message}]` : '';
        resolve({ code, stdout, stderr: stderr + extra, ms: Math.round(performance.now() - started) });
      },
    );
  });
}
