/**
 * The database an operator's command works on (`npm run keys`, `npm run webhooks`): the server's
 * configuration read from the environment (DATABASE_URL, else the SQLite file), opened with its
 * migrations. A database that cannot be used ends the command with one line (the address without
 * its password, the likely cause); the driver's stack follows only with LOG_LEVEL=debug or trace.
 * Anything else is a bug and keeps its stack.
 */
import { loadConfig, type Config } from '../../src/config.js';
import { ConfigError } from '../../src/shared/env.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { describeLocation, explainDatabaseError } from '../../src/store/databaseErrors.js';
import { fail } from '../lib/commandLine.js';

export interface OperatorDatabase {
  config: Config;
  database: DatabaseHandle;
  /** Ends the command on a known database failure; rethrows anything else. */
  failOnDatabase(error: unknown): never;
}

export async function openOperatorDatabase(usage: (message: string) => never): Promise<OperatorDatabase> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) usage(`Configuration error: ${error.message}`);
    throw error;
  }
  const location = describeLocation(config.databaseUrl, config.sqlitePath);
  const showStacks = config.logLevel === 'debug' || config.logLevel === 'trace';
  const failOnDatabase = (error: unknown): never => {
    const line = explainDatabaseError(error, location);
    if (line === undefined) throw error;
    if (showStacks) console.error(error);
    return fail(line);
  };
  const database = await openDatabase(config).catch(failOnDatabase);
  return { config, database, failOnDatabase };
}

/**
 * Runs an operator's command on the configured database, then ends the process with the exit code
 * it returns. A known database failure ends it with one line (failOnDatabase), the connections with
 * it; the database is closed whatever happens.
 */
export async function runOnOperatorDatabase(usage: (message: string) => never, command: (opened: OperatorDatabase) => Promise<number>): Promise<never> {
  const opened = await openOperatorDatabase(usage);
  let exitCode = 0;
  try {
    exitCode = await command(opened);
  } catch (error) {
    opened.failOnDatabase(error);
  } finally {
    await opened.database.close();
  }
  return process.exit(exitCode);
}
