/**
 * `DATABASE_URL=… npx tsx bench/pgcost.ts`: node-postgres's client CPU per query, layer by
 * layer, in process with IN_FLIGHT queries at a time (as under load): the bare pool with a
 * named statement, the same through a checked-out client with the query timeout (what
 * src/store/database.ts sends), and the store's getPet and first page (src/store/pets.ts's
 * compiled queries, as the server runs them). The differences say what each layer costs; the
 * database server's CPU is not in these figures.
 */
import pg from 'pg';
import { openPostgres, QUERY_TIMEOUT_MS } from '../src/store/database.js';
import { createPetStore } from '../src/store/pets.js';
import { cleanup, cleanupNow, dropDatabases } from './cleanup.js';
import { median, round2 } from './stats.js';
import { preparePostgresStore } from './stores.js';

const N = 20_000;
const IN_FLIGHT = 50;
const PETS = 10_000;
const GET = 'select "id", "name", "category_id", "status" from "pets" where "id" = $1';

/** Client CPU µs per call of `query`, IN_FLIGHT at a time, median of 3 runs after a warm-up. */
async function cpuPerQuery(query: (i: number) => Promise<unknown>): Promise<number> {
  const once = async (count: number) => {
    let next = 0;
    const started = process.cpuUsage();
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await query(next++);
    }));
    const used = process.cpuUsage(started);
    return (used.user + used.system) / count;
  };
  await once(N / 4);
  return round2(median([await once(N), await once(N), await once(N)]));
}

process.on('exit', cleanupNow);
try {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL');
  const store = await preparePostgresStore(databaseUrl, PETS);
  const url = store.env.DATABASE_URL!;
  const id = (i: number) => ((i * 7919) % PETS) + 1;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const bare = await cpuPerQuery((i) => pool.query({ name: 'get', text: GET, values: [id(i)] }));
  const checkedOut = await cpuPerQuery(async (i) => {
    const client = await pool.connect();
    try {
      return await client.query({ name: 'get', text: GET, values: [id(i)], query_timeout: QUERY_TIMEOUT_MS } as pg.QueryConfig);
    } finally {
      client.release();
    }
  });
  await pool.end();
  const handle = await openPostgres({ connection: url });
  const pets = createPetStore(handle.db, 'postgres');
  const get = await cpuPerQuery((i) => pets.get(id(i)));
  const page = await cpuPerQuery(() => pets.list({ limit: 20, status: undefined, afterId: undefined }));
  await handle.close();
  console.log(`client CPU per query, ${IN_FLIGHT} in flight, pool of 10 (µs): bare pool.query, named ${bare}; checked-out client + query timeout ${checkedOut}; store getPet (src/store, compiled query) ${get}; store first page (src/store, compiled query) ${page}`);
  await dropDatabases();
} finally {
  await cleanup();
}
process.exit(0);
