/** The animals (src/store/resources/pets.ts); listPets filters by status in id order. */
import { sql } from 'kysely';
import { bigint, idColumn, type MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  await sql`create table pets (
    id ${idColumn(dialect)},
    name text not null,
    category_id ${bigint(dialect)} not null check (category_id >= 1),
    status text not null check (status in ('available', 'pending', 'sold')),
    created_at text not null
  )`.execute(db);
  await sql`create index pets_status_id on pets (status, id)`.execute(db);
};
