/**
 * The command line of the scripts that run as programs: Node's `util.parseArgs`, strict (an
 * unknown option or a stray argument is a usage error: the message, then the help, exit 2), with
 * `--help`/`-h` printing the help and exiting 0.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<T extends Options> = { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };

export function usageError(help: string, message: string): never {
  console.error(`${message}\n\n${help}`);
  process.exit(2);
}

/** The options of `process.argv` as `options` declares them, or the process ends (help, or a usage error). */
export function commandLine<T extends Options>(help: string, options = {} as T): Values<T> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: process.argv.slice(2), options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    usageError(help, error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    console.log(help);
    process.exit(0);
  }
  return values as Values<T>;
}
