/**
 * The breaking-change gate's waivers (spec/breaking-waivers.yaml): breaks decided on and let
 * through, each with its reason: one exact line of the gate's output, or a change inside a shared
 * component as the gate words it, which covers every operation the change reaches (so retiring
 * one of them leaves the waiver as true as it was). Read strictly: a waiver
 * without a reason, or a file the gate cannot read, stops the gate rather than waiving nothing
 * or everything.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const WAIVERS_FILE = 'breaking-waivers.yaml';

export interface Waiver {
  /** The gate's line without its `BREAKING: ` prefix, or `components.<kind>.<name>: <where in it> <what>`. */
  change: string;
  why: string;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** The waivers in `file`; none when it does not exist. Throws on anything but a list of { change, why }. */
export function readWaivers(file: string): Waiver[] {
  if (!existsSync(file)) return [];
  const document: unknown = parse(readFileSync(file, 'utf8'));
  const list = (document as { waivers?: unknown } | null)?.waivers;
  if (!Array.isArray(list)) throw new Error('expected a top-level `waivers:` list');
  return list.map((entry: unknown, index) => {
    const { change, why } = (entry ?? {}) as Record<string, unknown>;
    if (!isText(change) || !isText(why)) throw new Error(`waiver ${index + 1} needs both \`change\` (a BREAKING line or a shared component's change) and \`why\``);
    return { change: change.replace(/^BREAKING: /, ''), why: why.trim() };
  });
}
