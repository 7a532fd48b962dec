/**
 * `npm run bench`: load-tests the production server against a Fastify peer, floor servers and a
 * bare `node:http` ceiling in the same rounds, and judges issue 31's goals (never fails on a miss).
 * `--help` lists the flags (bench/options.ts); bench/run.ts is the run, step by step.
 */
import { cleanup, cleanupNow } from './cleanup.js';
import { HELP, parseCommandLine } from './options.js';
import { run } from './run.js';

const command = parseCommandLine(process.argv.slice(2), process.env);
if (command.kind === 'help') {
  console.log(HELP);
  process.exit(0);
}
if (command.kind === 'error') {
  console.error(`${command.message}\n\n${HELP}`);
  process.exit(2);
}

let interrupted = false;
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping children and removing temp files…`);
    void cleanup().finally(() => process.exit(code));
  });
}
process.on('exit', cleanupNow);

run(command.options, command.databaseUrl).then(
  async () => {
    await cleanup();
    process.exit(0);
  },
  async (error: unknown) => {
    // After Ctrl-C the children die first and the run trips over that: the signal handler exits.
    if (!interrupted) console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    await cleanup();
    process.exit(interrupted ? 130 : 1);
  },
);
