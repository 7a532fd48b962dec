import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * better-sqlite3 behind Kysely, with its prepared statements kept: Kysely asks for `prepare(sql)`
 * on every query, and preparing costs about as much as running a small indexed read. Our SQL
 * texts are few (queries are compiled once, values are bound), so the cache stays small; the
 * bound only guards against a caller that builds SQL with inlined values.
 */
export function withStatementCache(database: { prepare(sql: string): unknown; close(): unknown }, maxStatements = 200): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql) as unknown as SqliteStatement;
        if (statements.size < maxStatements) statements.set(sql, statement);
      }
      return statement;
    },
  };
}
