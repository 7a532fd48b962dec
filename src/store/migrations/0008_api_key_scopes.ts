/** The scopes an API key holds (src/store/apiKeys.ts): null for a key that holds every scope, as every key made before did. */
import { sql } from 'kysely';
import type { MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db) => {
  await sql`alter table api_keys add column scopes text`.execute(db);
};
