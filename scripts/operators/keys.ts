/**
 * `npm run keys -- <command>`: issue, list and revoke API keys on the configured database
 * (the SQLite file by default, or DATABASE_URL). Only a key's hash is stored, so a key is shown
 * once, when it is created. A new key starts working, and a revoked one stops, on every running
 * instance within the key refresh interval (KEY_REFRESH_MS, 2 s by default). `usage` says which
 * keys still call deprecated operations (src/features/deprecation/calls.ts), to warn them before a sunset.
 */
import { loadBundledSpec, operationsOf } from '../../src/shared/spec.js';
import { createApiKeyStore, SCOPE } from '../../src/store/apiKeys.js';
import { deprecatedUsage } from '../../src/features/deprecation/calls.js';
import { printTable, usageError } from '../lib/commandLine.js';
import { runOnOperatorDatabase } from './database.js';

const HELP = `Usage: npm run keys -- <command>

  create <name> [--scopes <a,b>]
                  create a key; prints it once (the last line is the key alone). With
                  --scopes it holds those scopes only (comma- or space-separated, as an
                  operation's security lists them: pets:read); without, every scope
  list            list keys: id, name, created, revoked, scopes (never the keys)
  revoke <id>     revoke a key; running servers stop accepting it within seconds
  usage           who still calls deprecated operations: per key (id, name) and operation,
                  the calls and the first and last call (servers write them every 5 s and
                  when they stop); nothing for operations that are not deprecated

Uses DATABASE_URL when set (postgres://…), otherwise the SQLite file (SQLITE_PATH,
default data/animal-store.sqlite).`;

const usage = (message: string): never => usageError(HELP, message);

const [command, ...rest] = process.argv.slice(2);
if (!command || command === '--help' || command === '-h' || command === 'help') {
  console.log(HELP);
  process.exit(command ? 0 : 2);
}

await runOnOperatorDatabase(usage, async ({ config, database }) => {
  const keys = createApiKeyStore(database.db);
  let exitCode = 0;
  switch (command) {
    case 'create': {
      const flag = rest.indexOf('--scopes');
      const listed = flag === -1 ? undefined : rest[flag + 1];
      if (flag !== -1 && (listed === undefined || listed.startsWith('--'))) usage('--scopes needs the scopes, e.g. --scopes pets:read,pets:write');
      const scopes = listed?.split(/[\s,]+/).filter((scope) => scope.length > 0);
      const invalid = (scopes ?? []).filter((scope) => !SCOPE.test(scope));
      if (scopes?.length === 0 || invalid.length > 0) usage(`--scopes takes scopes as OAuth 2.0 writes them (printable characters but space, " and \\): ${invalid.join(', ') || '(none given)'}`);
      const name = (flag === -1 ? rest : [...rest.slice(0, flag), ...rest.slice(flag + 2)]).join(' ').trim();
      if (!name || name.length > 100) usage('create needs a name of 1 to 100 characters');
      const { info, key } = await keys.create(name, scopes);
      // Running servers reload the active keys every KEY_REFRESH_MS: until then they refuse it.
      console.error(`Created key ${info.id} "${info.name}"${info.scopes ? ` (scopes: ${info.scopes.join(" ")})` : ""} on ${database.location}. Running servers accept it within ${config.keyRefreshMs / 1000} s (a new start at once). Store it now; it is not shown again:`);
      console.log(key);
      break;
    }
    case 'list': {
      if (rest.length > 0) usage('list takes no arguments');
      const all = await keys.list();
      if (all.length === 0) console.log('No keys. Create one with `npm run keys -- create <name>`.');
      else printTable(['id', 'name', 'created', 'revoked', 'scopes'], all.map((k) => [String(k.id), k.name, k.createdAt, k.revokedAt ?? '-', k.scopes?.join(' ') ?? '(every scope)']));
      break;
    }
    case 'revoke': {
      const [id] = rest;
      if (!id || !/^\d{1,15}$/.test(id) || rest.length !== 1) usage('revoke needs one key id (see `list`)');
      if (await keys.revoke(Number(id))) console.log(`Revoked key ${id}. Running servers refuse it within ${config.keyRefreshMs / 1000} s.`);
      else {
        console.error(`No key has id ${id}.`);
        exitCode = 1;
      }
      break;
    }
    case 'usage': {
      if (rest.length > 0) usage('usage takes no arguments');
      const deprecated = operationsOf(loadBundledSpec()).filter((op) => op.deprecated);
      const sunsets = new Map(deprecated.map((op) => [op.operationId, op.sunset ?? '-']));
      const rows = (await deprecatedUsage(database.db)).filter((row) => sunsets.has(row.operationId));
      if (deprecated.length === 0) console.log('No operation of the contract is deprecated.');
      else if (rows.length === 0) console.log(`No calls of deprecated operations (${[...sunsets.keys()].join(', ')}) recorded.`);
      else {
        printTable(
          ['key id', 'key name', 'operation', 'sunset', 'calls', 'first call', 'last call'],
          rows.map((row) => [row.keyId === undefined ? '-' : String(row.keyId), row.keyName ?? '(key deleted)', row.operationId, sunsets.get(row.operationId) ?? '-', String(row.calls), row.firstCall, row.lastCall]),
        );
      }
      break;
    }
    default:
      usage(`Unknown command: ${command}`);
  }
  return exitCode;
});
