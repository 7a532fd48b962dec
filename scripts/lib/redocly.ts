import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * Runs one Redocly CLI command that writes a file, and returns that file's text. The scripts
 * that bundle the spec or render the docs all go through here, so the CLI is called one way:
 * from the project root (redocly.yaml applies), without telemetry or the update check (which
 * would ask the npm registry), with its own output shown only when it fails.
 */
export function redoclyOutput(command: 'bundle' | 'build-docs', input: string, outputName: string, extraArgs: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), `animal-store-redocly-`));
  try {
    const out = join(dir, outputName);
    try {
      execFileSync(join(projectRoot, 'node_modules', '.bin', 'redocly'), [command, input, ...extraArgs, '--output', out], {
        cwd: projectRoot,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`redocly ${command} ${input} failed:\n${stdout ?? ''}${stderr ?? String(error)}`);
    }
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The spec at `file` as one JSON document with every $ref resolved into it, as generate writes it. */
export function bundleSpec(file: string): string {
  return redoclyOutput('bundle', file, 'openapi.json').trimEnd() + '\n';
}
