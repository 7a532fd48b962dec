/**
 * Builds the client package, @animal-store/client, for one contract: client/'s hand-written sources
 * with that contract's types and operation table (scripts/lib/client/clientSources.ts), compiled to
 * JavaScript and declarations, with the contract itself and its changelog section, packed by
 * `npm pack`. The package's version is the contract's `info.version`. `npm run build:client` and
 * `npm run release` both build through here, so the client of every release is built the same way.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import type { OpenApiDocument } from '../../../src/shared/spec.js';
import { clientSources, generatedHeader } from './clientSources.js';
import { parseVersion } from '../contract/releases.js';

export interface ClientBuild {
  /** The project whose client/ holds the sources. */
  root: string;
  /** The bundled contract, as text (generated/openapi.json or spec/released/<x.y.z>.json). */
  contract: string;
  /** Where the contract comes from, for the generated files' first line. */
  source: string;
  /** The text of spec/CHANGELOG.md, whose section for the version the package carries. */
  changelog: string;
  /** The folder the tarball is written to. */
  outDir: string;
}

export interface BuiltClient {
  version: string;
  /** The tarball's path: `<outDir>/animal-store-client-<version>.tgz`. */
  tarball: string;
}

/** The changelog's `## <version> …` section, up to the next `## `; undefined when it has none. */
export function changelogSection(changelog: string, version: string): string | undefined {
  const lines = changelog.split('\n');
  const start = lines.findIndex((line) => line === `## ${version}` || line.startsWith(`## ${version} `));
  if (start === -1) return undefined;
  const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines.slice(start, next === -1 ? undefined : next).join('\n').trim();
}

/** The package's tarball name for `version`, as `npm pack` names a scoped package. */
export const tarballName = (version: string) => `animal-store-client-${version}.tgz`;

export async function buildClientPackage(build: ClientBuild): Promise<BuiltClient> {
  const document = JSON.parse(build.contract) as OpenApiDocument & { info?: { version?: unknown } };
  const version = String(document.info?.version ?? '');
  if (!parseVersion(version)) throw new Error(`${build.source}: info.version "${version}" is not a version x.y.z`);
  const section = changelogSection(build.changelog, version);
  if (section === undefined) throw new Error(`spec/CHANGELOG.md has no "## ${version}" section for the package to carry`);

  const client = join(build.root, 'client');
  const stage = mkdtempSync(join(tmpdir(), 'animal-store-client-'));
  try {
    // The hand-written sources and the package files; the generated ones come from this contract.
    for (const name of readdirSync(client)) {
      if ((name.endsWith('.ts') && !name.endsWith('.d.ts')) || name === 'tsconfig.json' || name === 'README.md') copyFileSync(join(client, name), join(stage, name));
    }
    const manifest = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
    mkdirSync(join(stage, 'generated'));
    for (const [file, text] of await clientSources(document, generatedHeader('npm run build:client', `${build.source} (contract ${version})`))) writeFileSync(join(stage, file), text);
    writeFileSync(join(stage, 'openapi.json'), build.contract);
    writeFileSync(join(stage, 'CHANGELOG.md'), `# @animal-store/client ${version}\n\nThe client of the Animal Store API contract ${version}. The contract's changelog for this version:\n\n${section.replace(/^## /, '## Contract ')}\n`);

    // The compiler finds openapi-fetch's and structured-headers' types in the project's node_modules.
    symlinkSync(join(build.root, 'node_modules'), join(stage, 'node_modules'), 'dir');
    compile(stage);
    rmSync(join(stage, 'node_modules'));
    // tsc emits no declaration file for a declaration file: the contract's types go in as they are.
    copyFileSync(join(stage, 'generated', 'openapi.d.ts'), join(stage, 'dist', 'generated', 'openapi.d.ts'));

    mkdirSync(build.outDir, { recursive: true });
    const pack = spawnSync('npm', ['pack', '--pack-destination', build.outDir, '--ignore-scripts', '--json'], { cwd: stage, encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);
    const [packed] = JSON.parse(pack.stdout) as { filename: string }[];
    if (packed?.filename !== tarballName(version)) throw new Error(`npm pack wrote ${packed?.filename}, not ${tarballName(version)}`);
    return { version, tarball: join(build.outDir, packed.filename) };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Compiles the staged package with its tsconfig.json into dist/: JavaScript and declarations; any diagnostic fails the build. */
function compile(stage: string): void {
  const configPath = join(stage, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, stage, undefined, configPath);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics, ...(read.error ? [read.error] : []), ...parsed.errors];
  if (diagnostics.length > 0) {
    const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => stage, getNewLine: () => '\n' };
    throw new Error(`The client does not compile against this contract:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
}
