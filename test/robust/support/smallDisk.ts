/**
 * A server whose data lives on a disk of its own that a test can fill and free: a tmpfs of a few
 * MiB mounted in a mount namespace of the server's own (util-linux's `unshare`, then `mount` in a
 * shell that executes the server in its place, so the pid is the server's), with SQLITE_PATH on
 * it. Nothing of the machine's mounts changes, and the tmpfs goes with the server's namespace.
 * The test reaches the disk through /proc/<pid>/root, the server's own view of the filesystem:
 * `fill()` writes a file there until the disk refuses (ENOSPC), `free()` deletes it, without
 * stopping the server. Needs root or unprivileged user namespaces (`unshare -r`); `smallDiskMissing()`
 * says why not, for a test to skip with.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startBannerProcess, type ServerProcess, type Store } from './server.js';

const asRoot = process.getuid?.() === 0;
/** `unshare`'s flags: a mount namespace, and a user namespace mapping us to root where we are not. */
const UNSHARE = asRoot ? ['--mount', '--propagation', 'private'] : ['--map-root-user', '--mount', '--propagation', 'private'];

let missing: string | undefined | null = null;

/** Why a small disk cannot be made here (undefined: it can): tried once, with a 1 MiB tmpfs. */
export function smallDiskMissing(): string | undefined {
  if (missing !== null) return missing;
  const probe = spawnSync('unshare', [...UNSHARE, 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt && echo mounted'], { encoding: 'utf8' });
  missing = probe.error ? `unshare could not run (${probe.error.message}; util-linux)` : /mounted/.test(probe.stdout) ? undefined : `a tmpfs cannot be mounted in a mount namespace of our own here: ${(probe.stderr || probe.stdout).trim()}`;
  return missing;
}

export interface SmallDisk {
  /** The folder the tmpfs is mounted on, as the server sees it (SQLITE_PATH is in it). */
  dir: string;
  store: Store;
  /** Fills the disk until it refuses a write; resolves with the bytes written. */
  fill(): number;
  /** Deletes what fill() wrote. */
  free(): void;
}

/** A store in a folder of its own, for startOnSmallDisk to mount its small disk on. */
export function smallDiskStore(prefix: string): Store {
  const dir = mkdtempSync(join(tmpdir(), `animal-store-${prefix}-`));
  return { kind: 'sqlite', env: { SQLITE_PATH: join(dir, 'store.sqlite') }, label: `sqlite on a small disk (${dir})`, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts `nodeArgs` (the bundled server's, or a fixture's) on `store`'s folder mounted as a tmpfs
 * of `mib` MiB in a mount namespace of its own.
 */
export async function startOnSmallDisk(store: Store, mib: number, nodeArgs: readonly string[], extraEnv: Record<string, string> = {}): Promise<{ server: ServerProcess; disk: SmallDisk }> {
  const path = store.env.SQLITE_PATH;
  if (path === undefined) throw new Error('a small disk holds a SQLite store: the store has no SQLITE_PATH');
  const dir = dirname(path);
  // "$0" is the folder, "$@" the server's command: exec keeps the pid.
  const script = `mount -t tmpfs -o size=${mib}m,mode=0755 tmpfs "$0" && exec "$@"`;
  const server = await startBannerProcess('unshare', [...UNSHARE, 'sh', '-c', script, dir, process.execPath, ...nodeArgs], store, extraEnv);
  const filler = `/proc/${server.pid}/root${dir}/filler`;
  const disk: SmallDisk = {
    dir,
    store,
    fill() {
      const fd = openSync(filler, 'a');
      const block = Buffer.alloc(256 * 1024, 0xaa);
      let written = 0;
      try {
        for (;;) {
          try {
            written += writeSync(fd, block);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw error;
          }
        }
        // The last pages a block did not fill.
        for (let small = Buffer.alloc(4096, 0xaa); ; ) {
          try {
            written += writeSync(fd, small);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw error;
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      unlinkSync(filler);
    },
  };
  return { server, disk };
}
