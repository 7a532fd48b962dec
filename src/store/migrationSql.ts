/**
 * What the migrations of src/store/migrations/ share: the signature of one, and the column types
 * that differ between the dialects (identity ids, 64-bit integers). Everything else is the same SQL.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from './schema.js';

/** One migration file's `up`: runs once per database, in file-name order, never edited once shipped. */
export type MigrationUp = (db: Kysely<unknown>, dialect: Dialect) => Promise<void>;

/** An id the database assigns: identity on PostgreSQL, AUTOINCREMENT on SQLite (never reused). */
export const idColumn = (dialect: Dialect): RawBuilder<unknown> => (dialect === 'postgres' ? sql`bigint generated always as identity primary key` : sql`integer primary key autoincrement`);

/** A 64-bit integer (ids, counts): SQLite's integer is 64-bit already. */
export const bigint = (dialect: Dialect): RawBuilder<unknown> => (dialect === 'postgres' ? sql`bigint` : sql`integer`);
