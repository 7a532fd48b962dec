/**
 * A throwaway PostgreSQL database on the server of an admin URL: the tests' and the bench's (both
 * create one per run and drop it after, so runs never share data).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  name: string;
  /** The admin URL with this database in its path. */
  url: string;
  /** Drops it, closing any connection still open to it. */
  drop(): Promise<void>;
}

async function run(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A fresh database on the server at `adminUrl`, for one test run; the caller drops it. */
export async function createScratchDatabase(adminUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `animal_store_${prefix}_${randomBytes(6).toString('hex')}`;
  await run(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => run(adminUrl, `drop database if exists ${name} with (force)`) };
}
