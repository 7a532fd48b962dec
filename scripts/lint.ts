/**
 * `npm run lint`: every check of the spec and the code, each run to its end even when an earlier
 * one failed, then one summary line per check; exit 1 if any failed. A chain of `&&` stopped at
 * the first failure: removing a field from Pet stopped at Redocly's example errors, and the
 * breaking-change gate, which says why the change breaks clients, never ran.
 *
 * The sunset calendar runs in this process (scripts/lib/contract/sunsets.ts): it is a few lines
 * over the parsed spec, and a tsx start of its own would cost more than the check.
 */
import { execFile, type ExecFileOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { projectRoot } from '../src/shared/paths.js';
import { commandLine, fail } from './lib/commandLine.js';
import { duplicatedKeyAdvice, duplicatedKeys } from './lib/duplicateKeys.js';
import { isRedoclyNoticeLine, redocly, redoclyEnv } from './lib/redocly.js';
import { CONTRACT_DATE, ContractDateError, WARNING_DAYS, checkSunsetCalendar, contractDay } from './lib/contract/sunsets.js';

const HELP = `Usage: npm run lint

Runs every check, each to its end, then prints which failed (exit 1 if any):

  redocly                 Redocly lint of the spec (redocly.yaml: recommended-strict plus our rules)
  spectral                Spectral's OWASP API Security Top 10 checks (.spectral.yaml)
  breaking-change gate    the spec against every released contract (also: npm run breaking)
  sunset calendar         each deprecated operation against its x-sunset: a warning (the step
                          still passes) when the sunset is ${WARNING_DAYS} days away or less, a failure once
                          it has passed and the operation is still in the spec (remove it now:
                          the server already answers it 410 Gone)
  tsc                     the TypeScript compiler over all code and tests (tsconfig.json)
  generated files         generated/ and the handler stubs match the spec (npm run generate --
                          --check, what CI runs): a spec edited without \`npm run generate\` fails
                          here, naming the stale files, even where the code still compiles

The calendar checks judge a day: today's date in UTC, or ${CONTRACT_DATE}=YYYY-MM-DD (for a what-if,
e.g. CONTRACT_DATE=2030-12-06 npm run lint). A sunset has passed on a day when its instant is at or
before 00:00 UTC of that day: from its instant on the server answers 410, so all that day.`;

commandLine(HELP);

// A bad date would make two checks fail for the same reason; it is refused before any runs.
const day = (() => {
  try {
    return contractDay();
  } catch (error) {
    if (!(error instanceof ContractDateError)) throw error;
    return fail(`npm run lint: ${error.message}`, 2);
  }
})();

const bin = (name: string) => join(projectRoot, 'node_modules', '.bin', name);

/** What a check printed, kept until its turn in the report: the checks run side by side, their output in order. */
class Output {
  private readonly parts: Array<{ to: 'out' | 'err'; text: string }> = [];
  out(text: string): void {
    if (text) this.parts.push({ to: 'out', text });
  }
  err(text: string): void {
    if (text) this.parts.push({ to: 'err', text });
  }
  line(text: string): void {
    this.out(`${text}\n`);
  }
  errLine(text: string): void {
    this.err(`${text}\n`);
  }
  print(): void {
    for (const { to, text } of this.parts) (to === 'out' ? process.stdout : process.stderr).write(text);
  }
}

/** Runs a command of a check to its end, its output captured; one that cannot start is said so. */
function run(command: string, args: string[], options: ExecFileOptions = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: projectRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      const unstarted = error !== null && typeof error.code === 'string' ? `could not run ${basename(command)}: ${error.message}\n` : '';
      resolve({ status, stdout: String(stdout), stderr: `${String(stderr)}${unstarted}` });
    });
  });
}
/** A check that is one command: passed when it exits 0, its output as it printed it. */
const command = (file: string, args: string[]) => async (output: Output) => {
  const result = await run(file, args, { env: { ...process.env, ...colour } });
  output.out(result.stdout);
  output.err(result.stderr);
  return { passed: result.status === 0 };
};
/** Colours as in a terminal when ours is one (captured output would turn them off). */
const colour: Record<string, string> = process.stdout.isTTY ? { FORCE_COLOR: '1' } : {};

async function redoclyLint(output: Output): Promise<{ passed: boolean }> {
  const lint = await run(redocly, ['lint'], { env: { ...redoclyEnv(), ...colour } });
  output.out(lint.stdout);
  output.err(lint.stderr.split('\n').filter((line) => !isRedoclyNoticeLine(line)).join('\n'));
  return { passed: lint.status === 0 };
}

/**
 * Whether generated/ still matches the spec (generate.ts --check, the check CI runs), started at
 * once beside the other checks (it reads the spec and writes nothing), read by the two below.
 */
const generatedCheck = new Promise<{ status: number; stderr: string }>((resolve) => {
  execFile(bin('tsx'), ['scripts/generate.ts', '--check'], { cwd: projectRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, _stdout, stderr) => {
    resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : 2, stderr: stderr || (error?.message ?? '') });
  });
});
const isStale = (check: { status: number; stderr: string }) => check.status === 1 && /Stale or missing generated files/.test(check.stderr);

/** A spec edited without `npm run generate` (new operations compile fine against the old types): the stale files named. */
async function generatedFiles(output: Output): Promise<{ passed: boolean; note?: string }> {
  const check = await generatedCheck;
  if (check.status === 0) {
    output.line('generated/ and handlers/ match the spec.');
    return { passed: true };
  }
  output.errLine(check.stderr);
  return isStale(check) ? { passed: false, note: STALE } : { passed: false };
}

/**
 * tsc; when it fails after a spec edit without `npm run generate`, its errors are about types
 * that no longer match and say nothing of the cause, so the cause is printed first.
 */
async function typeCheck(output: Output): Promise<{ passed: boolean; note?: string }> {
  const tsc = await run(bin('tsc'), ['-p', 'tsconfig.json', ...(process.stdout.isTTY ? ['--pretty'] : [])]);
  if (tsc.status === 0) {
    output.out(tsc.stdout);
    return { passed: true };
  }
  const check = await generatedCheck;
  const stale = isStale(check);
  // On stdout, where tsc prints its errors, so that it comes first whatever reads the two streams.
  if (stale) output.line(`${STALE}. tsc's errors below are most likely that (the types and the handler map come from generated/):\n${check.stderr}`);
  output.out(tsc.stdout);
  output.err(tsc.stderr);
  return stale ? { passed: false, note: STALE } : { passed: false };
}
const STALE = 'generated/ is stale: run `npm run generate`';

/** A check prints as it goes and says whether it passed, how many warnings it printed and what to do first (for the summary). */
type Check = { name: string; run: (output: Output) => Promise<{ passed: boolean; warnings?: number; note?: string }> };

async function sunsetCalendar(output: Output): Promise<{ passed: boolean; warnings: number }> {
  try {
    const report = await checkSunsetCalendar(join(projectRoot, 'spec', 'openapi.yaml'), day, 'spec/openapi.yaml');
    for (const line of report.warnings) output.line(line);
    for (const line of report.errors) output.errLine(line);
    output.line(report.summary);
    return { passed: report.errors.length === 0, warnings: report.warnings.length };
  } catch (error) {
    output.errLine(`Reading spec/openapi.yaml failed: ${error instanceof Error ? error.message : String(error)}`);
    return { passed: false, warnings: 0 };
  }
}

const CHECKS: readonly Check[] = [
  { name: 'redocly', run: redoclyLint },
  { name: 'spectral', run: command(bin('spectral'), ['lint', 'spec/openapi.yaml', '--ruleset', '.spectral.yaml', '--fail-severity=warn']) },
  { name: 'breaking-change gate', run: command(bin('tsx'), ['scripts/breaking.ts']) },
  { name: 'sunset calendar', run: sunsetCalendar },
  { name: 'tsc', run: typeCheck },
  { name: 'generated files', run: generatedFiles },
];

// A key written twice (a paste: the Petstore's `Pet` beside ours) stops every check below at a
// parse error that names neither the mapping nor the fix: said first, once.
const duplicates = (() => {
  try {
    return duplicatedKeyAdvice('spec/openapi.yaml', duplicatedKeys(readFileSync(join(projectRoot, 'spec', 'openapi.yaml'), 'utf8')));
  } catch {
    return []; // unreadable: the checks below say so
  }
})();
if (duplicates.length > 0) console.error(`\n== spec/openapi.yaml\n${duplicates.join('\n')}`);

// Side by side (each is one process, or a few lines in this one): on two cores the whole lint
// takes about the time of its longest checks instead of their sum. Each prints in its turn.
const running = CHECKS.map((check) => {
  const output = new Output();
  return { name: check.name, output, verdict: check.run(output) };
});
const results = [];
for (const { name, output, verdict } of running) {
  console.log(`\n== ${name}`);
  const result = await verdict;
  output.print();
  results.push({ name, ...result });
}

console.log('');
for (const { name, passed, warnings = 0, note } of results) {
  // Warnings are counted again here, where the verdicts are read: a passing step's output scrolls away.
  console.log(`${passed ? 'passed' : 'FAILED'}  ${name}${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'}, above)` : ''}${note ? ` (${note})` : ''}`);
}
const failed = results.filter((result) => !result.passed).map((result) => result.name);
if (duplicates.length > 0) console.log(`\nFirst: ${duplicates.length === 1 ? 'a key is' : `${duplicates.length} keys are`} declared twice in spec/openapi.yaml (above, under "== spec/openapi.yaml"); the failures are most likely that.`);
if (failed.length > 0) fail(`\nnpm run lint: ${failed.length} of ${CHECKS.length} checks failed (${failed.join(', ')}).`);
