/** Secrets every instance on this database shares (src/store/secrets.ts). */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db) => {
  await sql`create table server_secrets (name text primary key, value text not null)`.execute(db);
  // Signs paging cursors; one per database so every instance accepts every instance's cursors.
  const secret = randomBytes(32).toString('base64url');
  await sql`insert into server_secrets (name, value) values ('cursor', ${secret})`.execute(db);
};
