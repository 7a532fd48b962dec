/**
 * `npm run release -- <x.y.z>`: releases the working contract as version x.y.z, in one command
 * instead of five hand steps that could each be forgotten. What it writes, when it refuses and its
 * exit statuses: its --help (scripts/lib/contract/releaseCommand.ts); the changelog's computed
 * changes come from scripts/lib/contract/contractChanges.ts. Every new file is built first, the
 * generated ones and the package files in a throwaway copy of the project, and the working tree is
 * written only once all is ready.
 */
import { main } from './lib/contract/releaseCommand.js';

const code = await main(process.argv.slice(2), { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) });
if (code !== 0) process.exit(code);
