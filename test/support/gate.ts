/**
 * The breaking-change gate (scripts/lib/contract/breakingCommand.ts) run in the test's own process:
 * what it prints and its exit status, as `npm run breaking` would give them, without a TypeScript
 * start per run.
 * A test file runs it dozens of times against the same few contracts, so each contract is read and
 * dereferenced once per file (keyed by its path and text: the specs here hold no $ref to another
 * file) and shared by the runs: a comparison leaves the documents it is given as they were.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { main } from '../../scripts/lib/contract/breakingCommand.js';
import { loadContract } from '../../scripts/lib/contract/contractDiff.js';
import { CONTRACT_DATE } from '../../scripts/lib/contract/sunsets.js';

export interface GateResult {
  code: number;
  stdout: string;
  stderr: string;
}

const contracts = new Map<string, Promise<object>>();

/** The contract at `file` resolved, as loadContract gives it: read once. */
async function cachedContract(file: string): Promise<object> {
  const key = `${resolve(file)}\0${createHash('sha256').update(readFileSync(file)).digest('hex')}`;
  let contract = contracts.get(key);
  if (!contract) {
    contract = loadContract(file);
    contracts.set(key, contract);
    // A file that fails to load fails each run that reads it, as the command would.
    contract.catch(() => contracts.delete(key));
  }
  return contract;
}

/**
 * Runs the gate with `args` on `date` (CONTRACT_DATE; today when undefined), from the project
 * root as `npm run breaking` does; resolves with its exit status and output whatever the status.
 */
export async function runGate(args: readonly string[], date?: string): Promise<GateResult> {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env[CONTRACT_DATE];
  if (date !== undefined) env[CONTRACT_DATE] = date;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main([...args], {
    out: (text) => stdout.push(`${text}\n`),
    err: (text) => stderr.push(`${text}\n`),
    env,
    load: cachedContract,
  });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}
