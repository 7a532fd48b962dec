import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/shared/paths.js';

export const redocly = join(projectRoot, 'node_modules', '.bin', 'redocly');
/** Redocly CLI without telemetry or the update check (which would ask the npm registry). */
export const redoclyEnv = (env = process.env): NodeJS.ProcessEnv => ({ ...env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' });

/**
 * A line of the boxes Redocly CLI draws about itself, never about the spec: on Node 20, which the
 * project still supports, a 13-line "Node.js 20 support is ending" box tops every run, and no
 * option or environment variable turns it off (@redocly/cli/lib/index.js prints it whenever
 * the major version is 20). `npm run lint` and `npm run conformance` leave such lines out, so the
 * first problem is not pushed off a newcomer's screen.
 */
export const isRedoclyNoticeLine = (line: string): boolean => /^\s*[╔║╚]/.test(line);

/**
 * Runs one Redocly CLI command that writes a file, and returns that file's text. The scripts
 * that bundle the spec or render the docs all go through here, so the CLI is called one way:
 * from the project root (redocly.yaml applies), without telemetry or the update check (which
 * would ask the npm registry), with its own output shown only when it fails. Without blocking:
 * the docs render every contract version side by side.
 */
export async function redoclyOutput(command: 'bundle' | 'build-docs', input: string, outputName: string, extraArgs: readonly string[] = []): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `animal-store-redocly-`));
  try {
    const out = join(dir, outputName);
    try {
      await promisify(execFile)(redocly, [command, input, ...extraArgs, '--output', out], { cwd: projectRoot, env: redoclyEnv(), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      const said = `${stdout ?? ''}${stderr ?? String(error)}`.split('\n').filter((line) => !isRedoclyNoticeLine(line)).join('\n').trim();
      throw new Error(`redocly ${command} ${input} failed:\n${said}`);
    }
    return await readFile(out, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The spec at `file` as one JSON document with every $ref resolved into it, as generate writes it. */
export async function bundleSpec(file: string): Promise<string> {
  return (await redoclyOutput('bundle', file, 'openapi.json')).trimEnd() + '\n';
}
