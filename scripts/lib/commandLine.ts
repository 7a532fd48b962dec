/**
 * The command line of the scripts: Node's `util.parseArgs`, strict (an unknown option or a stray
 * argument is a usage error: the message, then the help, exit 2), with `--help`/`-h` printing the
 * help and exiting 0. A command run in process (a *Command.ts under scripts/lib/) ends with a
 * CommandExit where a script's process exits.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CommandExit } from './commandExit.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<T extends Options> = { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };

/** Where a command writes: its process's streams, or a test's. */
export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The options of `argv` as `options` declares them; a CommandExit after --help (0) or a usage error (2). */
export function parseCommandLine<T extends Options>(argv: string[], help: string, options: T, output: CommandOutput): Values<T> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    output.stderr(`${error instanceof Error ? error.message : String(error)}\n\n${help}\n`);
    throw new CommandExit(2);
  }
  if (values.help) {
    output.stdout(`${help}\n`);
    throw new CommandExit(0);
  }
  return values as Values<T>;
}

/** The same for a script's own process (`process.argv`), which exits where the command would end. */
export function commandLine<T extends Options>(help: string, options = {} as T): Values<T> {
  try {
    return parseCommandLine(process.argv.slice(2), help, options, { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) });
  } catch (error) {
    if (error instanceof CommandExit) process.exit(error.code);
    throw error;
  }
}

/** Ends a script's process with `message` on stderr: exit 1 by default, 2 for a usage error. */
export function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

export const usageError = (help: string, message: string): never => fail(`${message}\n\n${help}`, 2);

/** Rows under a header, each column as wide as its widest cell (the operators' commands' lists). */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}
