/**
 * `npm run lint`: every check of the spec and the code, each run to its end even when an earlier
 * one failed, then one summary line per check; exit 1 if any failed. A chain of `&&` stopped at
 * the first failure: removing a field from Pet stopped at Redocly's example errors, and the
 * breaking-change gate, which says why the change breaks clients, never ran.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';

const HELP = `Usage: npm run lint

Runs every check, each to its end, then prints which failed (exit 1 if any):

  redocly                 Redocly lint of the spec (redocly.yaml: recommended-strict plus our rules)
  spectral                Spectral's OWASP API Security Top 10 checks (.spectral.yaml)
  breaking-change gate    the spec against every released contract (also: npm run breaking)
  tsc                     the TypeScript compiler over all code and tests (tsconfig.json)`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}

const bin = (name: string) => join(projectRoot, 'node_modules', '.bin', name);

const CHECKS: readonly { name: string; command: string; args: string[] }[] = [
  { name: 'redocly', command: bin('redocly'), args: ['lint'] },
  { name: 'spectral', command: bin('spectral'), args: ['lint', 'spec/openapi.yaml', '--ruleset', '.spectral.yaml', '--fail-severity=warn'] },
  { name: 'breaking-change gate', command: bin('tsx'), args: ['scripts/breaking.ts'] },
  { name: 'tsc', command: bin('tsc'), args: ['-p', 'tsconfig.json'] },
];

const failed: string[] = [];
for (const check of CHECKS) {
  console.log(`\n== ${check.name}`);
  const run = spawnSync(check.command, check.args, { cwd: projectRoot, stdio: 'inherit' });
  if (run.error) console.error(`${check.name} could not run: ${run.error.message}`);
  if (run.status !== 0) failed.push(check.name);
}

console.log('');
for (const check of CHECKS) console.log(`${failed.includes(check.name) ? 'FAILED' : 'passed'}  ${check.name}`);
if (failed.length > 0) {
  console.error(`\nnpm run lint: ${failed.length} of ${CHECKS.length} checks failed (${failed.join(', ')}).`);
  process.exit(1);
}
