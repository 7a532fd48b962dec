/**
 * Which thrown errors mean the database cannot serve right now (the client should retry), as
 * opposed to a bug. The store asks it (to drop a broken connection, and not to retry a batch one
 * by one against a database that is down); the HTTP side asks it (a 503 with Retry-After instead
 * of a 500). It knows the drivers' error codes but imports no driver, so both can import it
 * without the HTTP side depending on the store.
 */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'SQLITE_BUSY', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_IOERR']);

/**
 * True when an error means the database cannot serve us right now. PostgreSQL class 08 is
 * connection exceptions, 57P0x is shutdown, 53 is insufficient resources.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return true;
    if (/^(08|53|57P0)/.test(code)) return true;
  }
  // node-postgres's own errors carry no code: a pool or connect timeout, a connection that ended
  // or errored under a query, a query timeout.
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Query read timeout|not queryable/i.test(error.message);
}
