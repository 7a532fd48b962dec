import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A secret created by a migration and shared by every instance on this database. */
export async function readSecret(db: Kysely<Database>, name: string): Promise<string> {
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirst();
  if (!row) throw new Error(`The database has no ${name} secret; its migrations did not run`);
  return row.value;
}
