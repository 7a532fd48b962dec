/**
 * The conformance check as a function: `npm run conformance` (scripts/conformance.ts, which says
 * how it runs Respect and keeps the key out of sight) is this module's main run on the process's
 * arguments, environment and output. The tests call main in their own process; Respect still runs
 * as its child.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../../src/shared/paths.js';
import { CommandExit, exitStatus } from '../commandExit.js';
import { parseCommandLine, type CommandOutput } from '../commandLine.js';
import { isNode } from '../operations.js';
import { startProcess } from '../processes.js';
import { isRedoclyNoticeLine, redocly, redoclyEnv } from '../redocly.js';
import { describeCheck, readReport, stepDescriptions, type CheckResult, type WorkflowResult } from './respectReport.js';

const READ = 'conformance/read.arazzo.yaml';
const WRITE = 'conformance/write.arazzo.yaml';
const PAGING = 'conformance/paging.arazzo.yaml';
/** The workflows' name for the contract (their sourceDescriptions); --server overrides its servers. */
const SOURCE = 'animalStore';
/** The step of read.arazzo.yaml whose Link rel="next" the paging run follows. */
const PAGE_OF_ONE = { file: READ, workflowId: 'listAndPage', stepId: 'onePage' };
const KEY_ENV = 'CONFORMANCE_KEY';
const DEFAULT_TIMEOUT_S = 10;
const MASK = '********';

const HELP = `Usage: npm run conformance -- --server <base URL> --key <key> [--write] [--timeout <s>] [--verbose]

Checks a running deployment of the Animal Store API against the contract (generated/openapi.json)
with Redocly Respect and the Arazzo workflows of conformance/. Respect checks every response's
status code, content type and body against the contract; the workflows add the headers the
contract promises and what the answers mean. See docs/conformance.md.

  --server <URL>   the deployment's base URL, ending in /v1 (e.g. http://127.0.0.1:8080/v1,
                   https://staging.api.animal-store.example/v1)
  --key <key>      an API key of that deployment. Or set ${KEY_ENV} instead, which keeps the key
                   out of the process list and shell history (use that in CI). Never printed.
  --write          also run the writing workflows, first: they add two pets named
                   "Conformance check ..." (the API cannot delete them), so use it on staging or
                   the sandbox, not on production data
  --timeout <s>    seconds to wait for each response (default ${DEFAULT_TIMEOUT_S})
  --verbose        show every request and response (the key masked)
  --help           show this text

Read-only (always): the list with its ETag and Cache-Control; a page of one (limit=1), whose
Link rel="next" must have the contract's form and is followed to the next page; status=available
returns only available pets; getPet (deprecated) of a listed pet with its Deprecation, Sunset and
Link rel="deprecation" headers, and a 304 for If-None-Match with its ETag; 400 for limit=0 and
for a cursor never issued; 404 for a pet that does not exist; 401 without a key and with a key
never issued (WWW-Authenticate), and getPet's 401 with its deprecation headers. The deployment
must hold at least one pet.
With --write: a create with an Idempotency-Key, its replay (same id, Idempotent-Replayed: true),
the same key with another body (422), the created pet fetched; a second create, after which a
page of one must carry a Link rel="next".

Prints Respect's report, then the failed checks (if any) and one summary line.
Exit codes: 0 the deployment conforms; 1 a check failed or a workflow could not run (the
deployment unreachable included); 2 the command was used wrongly.`;

/** Where a run writes what it prints, and the environment it reads: a process's own, or a test's. */
export interface ConformanceIo extends CommandOutput {
  /** Read for CONFORMANCE_KEY, and passed on to Respect. */
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal: Respect's output keeps its colours then. */
  isTTY: boolean;
}

/** Lines of Respect's output that say nothing about the deployment. */
function noise(line: string): boolean {
  // The CLI's boxes about itself, and where it saved the report this script reads and deletes.
  return isRedoclyNoticeLine(line) || /JSON logs saved in/.test(line);
}

interface RespectRun {
  code: number | null;
  /** Undefined when Respect wrote no report (it could not start, or could not read a workflow file). */
  workflows: WorkflowResult[] | undefined;
}

/**
 * The check, as `npm run conformance` runs it with `argv` (its arguments): writes what the command
 * prints through `io` and resolves with its exit status instead of exiting, so that a test can run
 * it in its own process (Respect still runs as the child it is).
 */
export const main = (argv: string[], io: ConformanceIo): Promise<number> => exitStatus(() => conformance(argv, io));

async function conformance(argv: string[], io: ConformanceIo): Promise<number> {
  const log = (text: string) => io.stdout(`${text}\n`);
  const logError = (text: string) => io.stderr(`${text}\n`);

  function usage(message: string): never {
    logError(`${message}\n\n${HELP}`);
    throw new CommandExit(2);
  }

  // ---- Options.
  const options = parseCommandLine(argv, HELP, { server: { type: 'string' }, key: { type: 'string' }, write: { type: 'boolean' }, timeout: { type: 'string' }, verbose: { type: 'boolean', short: 'v' } }, io);

  if (!options.server) usage('--server is required: the base URL of the deployment, ending in /v1.');
  const url = URL.canParse(options.server) ? new URL(options.server) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') usage(`--server ${options.server} is not an http:// or https:// URL.`);
  const server = url.toString().replace(/\/+$/, '');
  // The contract's paths and Link targets are under /v1; a base without it would fail every check.
  if (!new URL(server).pathname.endsWith('/v1')) usage(`--server ${server} does not end in /v1: give the API's base URL, e.g. ${server}/v1.`);

  const key = options.key ?? io.env[KEY_ENV];
  if (!key) usage(`An API key is required: --key <key>, or ${KEY_ENV} in the environment.`);
  if (!/^[\x21-\x7E]+$/.test(key)) usage('The API key must be visible ASCII characters only (it is sent as "Authorization: Bearer <key>").');

  const timeoutS = Number(options.timeout ?? DEFAULT_TIMEOUT_S);
  if (!Number.isInteger(timeoutS) || timeoutS < 1 || timeoutS > 600) usage(`--timeout ${options.timeout} is not a number of seconds from 1 to 600.`);

  // ---- Masking: the key, in the forms Respect could print it (JSON-escaped, URL-encoded).
  const secretForms = [...new Set([key, JSON.stringify(key).slice(1, -1), encodeURIComponent(key)])].sort((a, b) => b.length - a.length);
  const mask = (text: string) => secretForms.reduce((masked, form) => masked.replaceAll(form, MASK), text);

  // ---- Running Respect.
  const scratch = mkdtempSync(join(tmpdir(), 'animal-store-conformance-'));
  // An arrow function, not a declaration, so that what the checks above proved of the key holds inside.
  const run = async (): Promise<number> => {
    let runs = 0;
    async function respect(files: string[], inputs: Record<string, string | number>): Promise<RespectRun> {
      const report = join(scratch, `respect-${++runs}.json`);
      const env: NodeJS.ProcessEnv = { ...redoclyEnv(io.env), REDOCLY_CLI_RESPECT_INPUT: JSON.stringify(inputs), ...(io.isTTY ? { FORCE_COLOR: '1' } : { NO_COLOR: '1' }) };
      // Respect reads every REDOCLY_CLI_RESPECT_* variable as an option: only the input set here applies.
      for (const name of Object.keys(env)) if (name.startsWith('REDOCLY_CLI_RESPECT_') && name !== 'REDOCLY_CLI_RESPECT_INPUT') delete env[name];
      const args = ['respect', ...files, '--server', `${SOURCE}=${server}`, '--json-output', report, '--max-fetch-timeout', String(timeoutS * 1000)];
      // Every check fails the run: the defaults, stated so that a conformance run never relaxes them.
      args.push('--severity', JSON.stringify({ SCHEMA_CHECK: 'error', STATUS_CODE_CHECK: 'error', CONTENT_TYPE_CHECK: 'error', SUCCESS_CRITERIA_CHECK: 'error' }));
      if (options.verbose) args.push('--verbose');
      const child = startProcess(redocly, args, { cwd: projectRoot, env });
      // Passed on line by line (readline), so that the key is masked even when it arrives split across chunks.
      for (const stream of [child.child.stdout, child.child.stderr]) {
        if (stream) createInterface({ input: stream }).on('line', (line) => {
          if (!noise(line)) io.stdout(`${mask(line)}\n`);
        });
      }
      // 'close', not 'exit': the process has ended (or never started) and its output is read to the end.
      await new Promise((closed) => child.child.once('close', closed));
      const exit = await child.exited;
      if (!existsSync(report)) return { code: exit.code, workflows: undefined };
      try {
        return { code: exit.code, workflows: readReport(report) };
      } catch (error) {
        logError(`Respect's JSON report could not be read (${error instanceof Error ? error.message : String(error)}), so its checks are not counted.`);
        return { code: exit.code, workflows: undefined };
      }
    }

    // ---- The run.
    const started = performance.now();
    const apiKeyInput = { apiKey: key };
    const notes: string[] = [];
    log(`Conformance of ${server} to the contract (generated/openapi.json): read-only workflows${options.write ? ', after the writing ones (--write)' : ''}.`);

    const first = await respect(options.write ? [WRITE, READ] : [READ], apiKeyInput);
    const results: RespectRun[] = [first];

    // Following the Link: only when the page of one passed its checks, so its Link has the contract's form.
    const pageOfOne = first.workflows
      ?.filter((w) => w.file === PAGE_OF_ONE.file && w.workflowId === PAGE_OF_ONE.workflowId)
      .flatMap((w) => w.steps)
      .find((s) => s.stepId === PAGE_OF_ONE.stepId);
    const link = pageOfOne?.headers.link;
    if (!pageOfOne || pageOfOne.checks.some((c) => !c.passed)) {
      notes.push(`The Link rel="next" was not followed: ${PAGE_OF_ONE.workflowId}/${PAGE_OF_ONE.stepId} did not run, or did not pass.`);
    } else if (link === undefined) {
      notes.push('The Link rel="next" was not followed: a page of one has no next page (the deployment holds at most one pet). --write adds two.');
    } else {
      const target = new URL(/^<([^>]*)>/.exec(link)?.[1] ?? '', server);
      const cursor = target.searchParams.get('cursor') ?? '';
      const first = Array.isArray(pageOfOne.body) ? (pageOfOne.body[0] as unknown) : undefined;
      const previousId = isNode(first) && typeof first.id === 'number' ? first.id : 0;
      log(`\nFollowing the Link rel="next" of ${PAGE_OF_ONE.workflowId}/${PAGE_OF_ONE.stepId} (${PAGING}).`);
      results.push(await respect([PAGING], { ...apiKeyInput, cursor, previousId }));
    }

    // ---- Report: the failed checks, then one line.
    const allWorkflows = (ws: WorkflowResult[]): WorkflowResult[] => ws.flatMap((w) => [w, ...allWorkflows(w.nested)]);
    const everyWorkflow = allWorkflows(results.flatMap((r) => r.workflows ?? []));
    const steps = everyWorkflow.flatMap((w) => w.steps.map((s) => ({ file: w.file, ...s })));
    const checks = steps.flatMap((s) => s.checks);
    const isFailure = (check: CheckResult) => !check.passed && check.severity === 'error';
    const failed = checks.filter(isFailure).length;
    const warned = checks.filter((c) => !c.passed && !isFailure(c)).length;
    const failedSteps = steps.filter((s) => s.checks.some(isFailure));
    const failedWorkflows = everyWorkflow.filter((w) => w.steps.some((s) => s.checks.some(isFailure)));

    if (failedSteps.length > 0) {
      log('\nFailed checks:');
      for (const step of failedSteps) {
        const error = isNode(step.body) && typeof step.body.code === 'string' ? ` ${step.body.code}${typeof step.body.message === 'string' ? `: ${step.body.message}` : ''}` : '';
        // Respect reports the URL with the response, so a request that got none has no URL in the report.
        const outcome = step.statusCode ? `${step.method} ${step.url} answered ${step.statusCode}${error}` : `no answer from ${server}`;
        log(mask(`  ✗ ${step.file} › ${step.workflowId} › ${step.stepId}: ${outcome}`));
        const description = stepDescriptions(step.file).get(`${step.workflowId}/${step.stepId}`);
        if (description) log(mask(`      (${description})`));
        for (const check of step.checks.filter(isFailure)) {
          log(mask(`      ✗ ${describeCheck(check)}`));
          // The value the check saw, for each header it names: Respect prints the condition only.
          for (const [, name] of check.message.matchAll(/\$response\.header\.([A-Za-z0-9-]+)/g)) {
            const value = step.headers[(name ?? '').toLowerCase()];
            log(mask(`        ${name}: ${value === undefined ? '(absent)' : JSON.stringify(value)}`));
          }
        }
      }
    }
    if (steps.length > 0 && steps.every((s) => s.statusCode === 0)) notes.push(`No request got an answer from ${server}: is the deployment running, and is the URL right?`);
    for (const note of notes) log(`\n${note}`);

    const respectFailed = results.some((r) => r.code !== 0 || r.workflows === undefined);
    const ok = !respectFailed && failed === 0;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
    const summary = [
      `${plural(everyWorkflow.length, 'workflow')}${failedWorkflows.length ? ` (${failedWorkflows.length} failed)` : ''}`,
      `${plural(steps.length, 'step')}${failedSteps.length ? ` (${failedSteps.length} failed)` : ''}`,
      `${checks.length - failed - warned} checks passed, ${failed} failed${warned ? `, ${warned} warnings` : ''}`,
    ].join(', ');
    if (respectFailed && failed === 0) log(`\nRespect did not finish cleanly (exit code ${results.map((r) => r.code).join(', ')}); its output is above.`);
    log(`\nConformance ${ok ? 'PASSED' : 'FAILED'}: ${summary}; ${server}${options.write ? ' (with --write)' : ' (read-only)'}, ${seconds} s.`);
    return ok ? 0 : 1;
  };
  try {
    return await run();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

