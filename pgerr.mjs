import pg from 'pg';
const urls = process.argv.slice(2);
for (const u of urls) {
  const c = new pg.Client({ connectionString: u, connectionTimeoutMillis: 2000 });
  try { await c.connect(); await c.query('create table t41(x int)'); console.log(u, 'OK'); await c.end(); }
  catch (e) { console.log(u, '=>', e.constructor.name, JSON.stringify({ code: e.code, message: e.message, errno: e.errno, syscall: e.syscall, hostname: e.hostname, errors: e.errors?.map(x => x.code) })); }
}
