/**
 * The TypeScript compiler on files a test writes, with a project's own tsconfig.json: for tests
 * that prove a mistake is a compile error (the handler map, the client's parameters and headers).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The compiler options of the tsconfig.json in `projectRoot`. */
export function compilerOptionsOf(projectRoot: string): ts.CompilerOptions {
  const configPath = join(projectRoot, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, projectRoot, undefined, configPath);
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));
  return parsed.options;
}

/** `TS<code>: <message>`, prefixed with `file:line: ` when `located`. */
export function diagnosticText(d: ts.Diagnostic, located = false): string {
  const where = located && d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
  return `${where}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
}

/** The diagnostics of `files`, compiled with the options of `projectRoot`'s tsconfig.json. */
export function compile(projectRoot: string, files: readonly string[]): ts.Diagnostic[] {
  return [...ts.getPreEmitDiagnostics(ts.createProgram({ rootNames: files, options: compilerOptionsOf(projectRoot) }))];
}

/**
 * Writes each case to `<dir>/<name>.ts`, compiles them all in one program, and returns each
 * case's diagnostics (texts), with those of any other file under 'elsewhere'.
 */
export function compileCases<Name extends string>(projectRoot: string, dir: string, cases: Readonly<Record<Name, string>>, located = false): Map<Name | 'elsewhere', string[]> {
  mkdirSync(dir, { recursive: true });
  const names = Object.keys(cases) as Name[];
  const fileOf = (name: Name) => join(dir, `${name}.ts`);
  for (const name of names) writeFileSync(fileOf(name), cases[name]);
  const byFile = new Map<string, Name>(names.map((n) => [ts.sys.resolvePath(fileOf(n)), n]));
  const diagnostics = new Map<Name | 'elsewhere', string[]>();
  for (const d of compile(projectRoot, names.map(fileOf))) {
    const owner = (d.file && byFile.get(ts.sys.resolvePath(d.file.fileName))) || 'elsewhere';
    diagnostics.set(owner, [...(diagnostics.get(owner) ?? []), diagnosticText(d, located)]);
  }
  return diagnostics;
}
