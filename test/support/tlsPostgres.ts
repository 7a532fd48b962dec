/**
 * A throwaway PostgreSQL 15 cluster with TLS on, for the tests of `sslmode` in DATABASE_URL: a
 * self-signed CA and a server certificate for `localhost` made with openssl in a temp folder,
 * initdb and pg_ctl from Debian's PostgreSQL on a free port, TLS required by pg_hba.conf for every
 * TCP connection. Run as root, the cluster's programs run as the `postgres` user (PostgreSQL
 * refuses to run as root) and the folder is handed to it.
 */
import { execFileSync, spawnSync, type ExecFileSyncOptions } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/processes.js';

const BIN = '/usr/lib/postgresql/15/bin';

/** Why a TLS cluster cannot be made here, or undefined when it can. */
export function tlsClusterMissing(): string | undefined {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'pg_ctl'))) return `PostgreSQL 15's initdb and pg_ctl are not in ${BIN}`;
  if (spawnSync('openssl', ['version']).status !== 0) return 'openssl is not installed';
  return undefined;
}

export interface TlsCluster {
  port: number;
  /** The CA's certificate (PEM file): what sslrootcert names. */
  caFile: string;
  /** The names the server's certificate holds. */
  certificateNames: readonly string[];
  /** `postgres://postgres@<host>:<port>/postgres` with `query` appended. */
  url(host: string, query: string): string;
  stop(): void;
}

/** The uid and gid the cluster runs as: postgres's when this process is root, else this process's own. */
function clusterUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export async function startTlsCluster(): Promise<TlsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-tls-'));
  chmodSync(dir, 0o755);
  const as = clusterUser();
  const run = (command: string, args: string[], options: ExecFileSyncOptions = {}) => execFileSync(command, args, { stdio: 'pipe', ...options });
  const asCluster = (command: string, args: string[]) => run(command, args, as === undefined ? {} : { uid: as.uid, gid: as.gid });
  const file = (name: string) => join(dir, name);
  const names = ['localhost', 'db.animal-store.test'];
  try {
    // The CA, then the server's key and a certificate it signs for `names` only (not 127.0.0.1).
    run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=animal-store test CA', '-keyout', file('ca.key'), '-out', file('ca.pem')]);
    run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', file('server.key'), '-out', file('server.csr')]);
    writeFileSync(file('san.ext'), `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}\n`);
    run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('san.ext'), '-out', file('server.pem')]);
    chmodSync(file('server.key'), 0o600);
    chmodSync(file('ca.pem'), 0o644);
    if (as !== undefined) {
      chownSync(file('server.key'), as.uid, as.gid);
      chownSync(file('server.pem'), as.uid, as.gid);
      chownSync(dir, as.uid, as.gid);
    }
    asCluster(join(BIN, 'initdb'), ['-D', file('data'), '-U', 'postgres', '-A', 'trust', '--no-sync']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  writeFileSync(
    file('data/postgresql.auto.conf'),
    [`port = ${port}`, "listen_addresses = 'localhost'", `unix_socket_directories = '${dir}'`, 'ssl = on', `ssl_cert_file = '${file('server.pem')}'`, `ssl_key_file = '${file('server.key')}'`, 'fsync = off', ''].join('\n'),
  );
  // TLS or nothing over TCP: a connection without it is rejected by name, as managed databases do.
  writeFileSync(file('data/pg_hba.conf'), ['local all all trust', 'hostssl all all 127.0.0.1/32 trust', 'hostssl all all ::1/128 trust', 'host all all all reject', ''].join('\n'));
  if (as !== undefined) {
    chownSync(file('data/postgresql.auto.conf'), as.uid, as.gid);
    chownSync(file('data/pg_hba.conf'), as.uid, as.gid);
  }
  try {
    asCluster(join(BIN, 'pg_ctl'), ['-D', file('data'), '-l', file('server.log'), '-w', '-t', '60', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    caFile: file('ca.pem'),
    certificateNames: names,
    url: (host, query) => `postgres://postgres@${host}:${port}/postgres${query ? `?${query}` : ''}`,
    stop() {
      try {
        asCluster(join(BIN, 'pg_ctl'), ['-D', file('data'), '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
