/** The animals' photos (src/store/resources/photos.ts): one per animal, the image's bytes in the row itself. */
import { sql } from 'kysely';
import { bigint, type MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  // One row per animal, written whole by one statement (an upsert), so a crash never leaves a
  // torn photo: the old row or the new one. BLOB on SQLite, bytea on PostgreSQL, so every
  // instance on one PostgreSQL serves the same photo. sha256 (hex, of `bytes`) gives the ETag
  // without hashing megabytes per read.
  await sql`create table pet_photos (
    pet_id ${bigint(dialect)} primary key references pets (id),
    media_type text not null,
    bytes ${dialect === 'postgres' ? sql`bytea` : sql`blob`} not null,
    size integer not null check (size >= 0),
    sha256 text not null,
    updated_at text not null
  )`.execute(db);
};
