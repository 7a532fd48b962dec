/**
 * Why the database could not be opened, as one line for whoever typed DATABASE_URL (or runs the
 * sandbox's SQLite file): the address, with any password masked, the likely cause and what to
 * check. The server's start (src/main.ts), `npm run keys` and `npm run sandbox` print it instead
 * of a driver's stack trace. It reads the error codes node-postgres, Node's network and TLS
 * layers, and better-sqlite3 attach, and imports none of them.
 */

/** The fields the drivers put on their errors (SQLSTATE for PostgreSQL's own, errno names for Node's). */
interface DriverError {
  code?: unknown;
  message: string;
  hostname?: unknown;
}

/** Where the data lives, for a message: a postgres URL without its password, or a file path. */
export function describeLocation(databaseUrl: string | undefined, sqlitePath: string): string {
  return databaseUrl === undefined ? sqlitePath : redactUrl(databaseUrl);
}

/** The URL with its password replaced by `***` (and nothing else changed), or a placeholder if it does not parse. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres (unparseable URL)';
  }
}

const TLS_UNTRUSTED = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT']);

function hostOf(location: string): string {
  try {
    return new URL(location).host || 'the local socket';
  } catch {
    return location;
  }
}

/** The cause and what to check, for an error of a PostgreSQL connection or its first statements; undefined when it is none we know. */
function postgresCause(error: DriverError, location: string): string | undefined {
  const code = typeof error.code === 'string' ? error.code : '';
  const host = hostOf(location);
  const message = error.message;
  if (code === 'ECONNREFUSED') return `connection refused: nothing accepts connections at ${host} (is PostgreSQL, or the pooler, running there, and is the port right?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `unknown host ${typeof error.hostname === 'string' ? error.hostname : host}: the name does not resolve (check the host in DATABASE_URL)`;
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || /timeout exceeded when trying to connect|connection timeout/i.test(message)) {
    return `no answer from ${host} in time (a wrong address, a firewall dropping the connection, or an overloaded server)`;
  }
  // node-postgres's word for a connection that closed (or was closed by its connect timeout) before PostgreSQL spoke;
  // the same close seen by the socket first, as a reset, depending on which side notices it first.
  if (code === 'ECONNRESET' || code === 'EPIPE' || /Connection terminated unexpectedly/i.test(message)) return `the connection to ${host} closed before PostgreSQL answered (no answer in time, a firewall, or something else than PostgreSQL or a pooler on that port)`;
  if (code === '28P01' || /password authentication failed/i.test(message)) return `password authentication failed (${message}): check the user and password in DATABASE_URL`;
  if (code === '28000') {
    if (/(no pg_hba\.conf entry|pg_hba\.conf rejects connection).*no encryption/i.test(message)) return `the server accepts this user only over TLS (${message}): add sslmode=verify-full (and sslrootcert=<CA file>) to DATABASE_URL`;
    return `the server refused the login (${message}): check the user in DATABASE_URL, and pg_hba.conf on the server`;
  }
  if (code === '3D000') return `${message}: create it (createdb), or fix the database name in DATABASE_URL`;
  if (code === '42501') return `${message}: the user needs CREATE on the schema its tables go in (GRANT CREATE ON SCHEMA …), or a schema of its own (docs/operations.md#a-schema-of-its-own)`;
  if (code === '42P05' || code === '26000') return `${message}: named prepared statements meet a pooler in transaction mode; set DATABASE_PREPARED_STATEMENTS=off (docs/operations.md#behind-a-connection-pooler)`;
  if (code === '08P01' && /unsupported startup parameter/i.test(message)) return `${message}: the pooler refuses startup options; set the schema on the role instead (docs/operations.md#a-schema-of-its-own)`;
  if (code === '08P01' || code === '08004' || code === '08006') return `the server or pooler refused the connection (${message})`;
  if (code === '57P03') return `the server is starting up or shutting down (${message}): try again shortly`;
  if (code === '53300') return `the server has no connection slot left (${message}): lower the instances' pools or raise max_connections`;
  if (/does not support SSL/i.test(message)) return `TLS: DATABASE_URL asks for TLS (sslmode) but the server at ${host} does not offer it: enable ssl on the server, or drop sslmode`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the server's certificate does not name ${host} (${message}): connect by a name the certificate holds, or reissue it`;
  if (TLS_UNTRUSTED.has(code)) return `TLS: the server's certificate is not signed by a CA this process trusts (${message}): give the CA's certificate with sslrootcert=<file> in DATABASE_URL`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `TLS: the server's certificate is out of its validity dates (${message})`;
  if (code === 'ENOENT' && /\bsslrootcert|\.pem|\.crt/i.test(message)) return `TLS: a certificate file named in DATABASE_URL cannot be read (${message})`;
  if (/^ERR_(SSL|TLS)_|^EPROTO$/.test(code) || /SSL routines|wrong version number/i.test(message)) return `TLS handshake failed (${message})`;
  return undefined;
}

/** The same for the embedded SQLite file (the server without DATABASE_URL, the sandbox). */
function sqliteCause(error: DriverError): string | undefined {
  const code = typeof error.code === 'string' ? error.code : '';
  if (code === 'SQLITE_CANTOPEN' || code === 'ENOENT' || code === 'ENOTDIR') return `the file cannot be opened (${error.message}): check that its folder exists and is writable (SQLITE_PATH)`;
  if (code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') return `permission denied (${error.message}): the file or its folder is not writable by this user`;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return `the disk is full (${error.message})`;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') return `the file is not a usable SQLite database (${error.message}): point SQLITE_PATH at another file`;
  if (code === 'SQLITE_BUSY') return `the file is locked by another process (${error.message})`;
  return undefined;
}

/**
 * One line naming the database and why it could not be used, or undefined when `error` is not a
 * database failure we recognise (a bug: its stack is worth showing). `location` is the URL
 * without its password (describeLocation) or the SQLite path; a password is never printed,
 * because none reaches the line: the message of a driver error names no password.
 */
export function explainDatabaseError(error: unknown, location: string): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const driverError = error as DriverError;
  const isPostgres = /^postgres(ql)?:/i.test(location);
  const cause = isPostgres ? postgresCause(driverError, location) : sqliteCause(driverError);
  return cause === undefined ? undefined : `Cannot use the database at ${location}: ${cause}`;
}
