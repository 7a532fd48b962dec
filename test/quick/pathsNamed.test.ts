/**
 * Every file or folder of the repository that a doc or a comment names exists (as Rust's
 * intra-doc links): a rename or a removal that leaves a comment, the README or a docs/ page
 * pointing at nothing fails here, naming the place and the path.
 *
 * Read: every *.md of the repository (README.md, docs/, spec/, patches/, client/, test/fixtures/),
 * the comments of the *.ts files under src/, handlers/, scripts/, bench/, client/ and test/
 * (not generated/ nor test/fixtures/, which are written by tools or copied), and the comments of
 * the .ci/ scripts. A mention is:
 *
 * - a markdown link's target (`[x](../src/domain/etag.ts#L3)`), relative to its page: must exist;
 * - a path from the repository's root (`src/domain/etag.ts`, `test/quick/`, `.ci/run`): its first
 *   segment is a top-level entry of the repository; must exist;
 * - a path from its own file (`./stage.js`, `../shared/env.ts`): must exist;
 * - a shorter path with a file extension (`queries/prepared.ts`, `pipeline/stage.ts`), named
 *   relative to whatever the sentence is about: some file of the repository (or of an installed
 *   package, `ajv/dist/2020.js`) must end with it;
 * - a bare TypeScript file name (`respond.ts`): some file of the repository must have that name.
 *
 * In an import-like mention `.js` stands for the `.ts` beside it. Not mentions: URLs, globs and
 * placeholders (`src/features/*\/`, `handlers/<operationId>.ts`, `spec/released/{x}.json`), what a
 * build or a run writes (the git-ignored folders: dist/, data/, bench/results/, node_modules/),
 * and the few paths of ALLOWED, each with its reason.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/shared/paths.js';

/** Paths named on purpose although they do not exist, as `<file> <path>`, each with why. */
const ALLOWED: Record<string, string> = {
  'docs/architecture.md src/store/resources/orders.ts': 'the new-resource recipe: a file the reader creates',
  'docs/architecture.md src/store/migrations/0008_orders.ts': 'the new-resource recipe: a file the reader creates',
  'docs/architecture.md handlers/placeOrder.ts': 'the new-resource recipe: a stub npm run generate creates',
  'docs/architecture.md 0008_pets_birth_date.ts': "the example of a new migration's name",
  'test/loop/storeRecipes.test.ts src/store/resources/orderExamples.ts': 'the resource module the test writes on its copy of the project',
  'docs/frontend.md generated/operations.ts': 'moving from a copied client: where the copied file lived before the client package (now client/generated/)',
  'patches/README.md validation.test.ts': "openapi-backend's own test file (its suite run on the patched package)",
  'patches/README.md router.test.ts': "openapi-backend's own test file (its suite run on the patched package)",
};

/**
 * Mentions of src/ files that are wrong today, left to the redesign of src/ under way in another
 * branch (issue 46, item 6): TEMPORARY. Each is `<file> <path>`; the list must only shrink,
 * and this test fails for an entry that is no longer found, so a fix also empties its line here.
 */
const PENDING_SRC_FIXES: string[] = [];

/** Top-level folders whose contents a build or a run writes (git-ignored): named, never committed. */
const OUTPUTS = ['dist/', 'data/', 'bench/results/', 'node_modules/', '.vitest-'];

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'data', 'results']);

function walk(dir: string, keep: (path: string) => boolean, skip: (path: string) => boolean = () => false): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) || skip(path) ? [] : walk(path, keep, skip);
    return entry.isFile() && keep(path) ? [path] : [];
  });
}

const rel = (path: string) => relative(projectRoot, path).split(sep).join('/');
const allFiles = walk(projectRoot, () => true).map(rel);
const fileNames = new Set(allFiles.map((file) => file.slice(file.lastIndexOf('/') + 1)));
const topLevel = new Set(readdirSync(projectRoot));

/** Text in which mentions are looked for, with where it starts (line numbers). */
interface Passage {
  file: string;
  line: number;
  text: string;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The comments of a TypeScript file, through the compiler's own scanner of each token's trivia. */
function tsComments(file: string): Passage[] {
  const text = readFileSync(join(projectRoot, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const seen = new Map<number, number>();
  const visit = (node: ts.Node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length === 0) {
      for (const range of [...(ts.getLeadingCommentRanges(text, node.pos) ?? []), ...(ts.getTrailingCommentRanges(text, node.end) ?? [])]) seen.set(range.pos, range.end);
    }
    children.forEach(visit);
  };
  visit(source);
  return [...seen].map(([pos, end]) => ({ file, line: lineAt(text, pos), text: text.slice(pos, end) }));
}

/** A shell script's comments: from a `#` at the start of a word to the end of the line. */
function shellComments(file: string): Passage[] {
  return readFileSync(join(projectRoot, file), 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      const at = line.search(/(^|\s)#/);
      return at < 0 || line.startsWith('#!') ? [] : [{ file, line: index + 1, text: line.slice(at) }];
    });
}

function markdown(file: string): Passage[] {
  return readFileSync(join(projectRoot, file), 'utf8')
    .split('\n')
    .map((text, index) => ({ file, line: index + 1, text }));
}

const CODE_ROOTS = ['src', 'handlers', 'scripts', 'bench', 'client', 'test'];
const notCopied = (path: string) => {
  const file = rel(path);
  return file === 'test/fixtures' || file === 'client/generated';
};
// This file is left out: its own comments show dead paths as examples.
const sources = CODE_ROOTS.flatMap((root) => walk(join(projectRoot, root), (path) => path.endsWith('.ts'), notCopied))
  .map(rel)
  .filter((file) => file !== 'test/quick/pathsNamed.test.ts');
const pages = walk(projectRoot, (path) => path.endsWith('.md')).map(rel);
const scripts = ['.ci/run', '.ci/install-node'].filter((file) => existsSync(join(projectRoot, file)));

const passages: Passage[] = [...pages.flatMap(markdown), ...sources.flatMap(tsComments), ...scripts.flatMap(shellComments)];

const URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s)>`'"]*/gi;
const LINK = /\]\(([^)\s]+)\)/g;
// A run of path characters with at least one slash, or a bare file name with an extension.
const PATH = /(?<![\w@$~.\/*<>{}+-])(?:\.{1,2}\/)?[\w.@<>*{}$+-]*(?:\/[\w.@<>*{}$+-]*)+|(?<![\w@$~.\/*<>{}+-])[\w-]+(?:\.[\w-]+)*\.(?:ts|mts|md)(?![\w\/-])/g;
const EXTENSION = /\.(ts|mts|js|mjs|cjs|json|md|yaml|yml|sh|sql|html|tgz|patch)$/;
// Globs, `<name>`, `{x}`, `…`, `NNNN_what.ts`, `<x.y.z>`, and `x.ts`, the generic example of a module.
const PLACEHOLDER = /[<>*{}$]|\.\.\.|…|NNNN|x\.y\.z|(^|\/)x\.[a-z]+$/;

function exists(path: string): boolean {
  lookedUp++;
  if (existsSync(path)) return true;
  // An import-like `./x.js` names the `x.ts` beside it.
  return /\.m?js$/.test(path) && existsSync(path.replace(/(\.m?)js$/, '$1ts'));
}

/** How many mentions were looked up (the scan is not vacuous). */
let lookedUp = 0;

/** Why a mention in `file` is dead, or undefined when it names something that exists (or is no mention). */
function deadPath(file: string, mention: string, isLink: boolean): string | undefined {
  let path = mention.replace(/[#?].*$/, '').replace(/[.,:;]+$/, '');
  if (path === '' || PLACEHOLDER.test(path) || ALLOWED[`${file} ${path}`] !== undefined) return undefined;
  const here = dirname(join(projectRoot, file));
  // A package's own path (`@redocly/cli/lib/index.js`, `@animal-store/client/openapi.json`).
  if (path.startsWith('@')) return undefined;
  if (isLink || path.startsWith('./') || path.startsWith('../')) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return undefined;
    // In a page's prose (not a link), `./x` is the reader's own folder: `npm install ./client.tgz`.
    if (!isLink && file.endsWith('.md')) return undefined;
    const target = resolve(here, path);
    if (target !== projectRoot && !target.startsWith(projectRoot + sep)) return undefined;
    const fromRoot = rel(target);
    if (OUTPUTS.some((output) => `${fromRoot}/`.startsWith(output)) || ALLOWED[`${file} ${fromRoot}`] !== undefined) return undefined;
    return exists(target) ? undefined : path;
  }
  if (path.startsWith('/')) return undefined; // the machine's own files (/usr/bin/chromium)
  if (OUTPUTS.some((output) => path.startsWith(output))) return undefined;
  const first = path.split('/', 1)[0] ?? '';
  if (path.includes('/') && topLevel.has(first)) return exists(join(projectRoot, path)) ? undefined : path;
  if (!EXTENSION.test(path)) return undefined;
  if (!path.includes('/')) {
    if (!/\.m?ts$/.test(path) || path.endsWith('.d.ts')) return undefined;
    return fileNames.has(path) ? undefined : path;
  }
  // Relative to what the sentence is about: some file of the repository, or of a package, ends with it.
  const tails = [path, path.replace(/(\.m?)js$/, '$1ts')];
  if (allFiles.some((known) => tails.some((tail) => known.endsWith(`/${tail}`)))) return undefined;
  if (existsSync(join(projectRoot, 'node_modules', path))) return undefined;
  return path;
}

function deadPaths(): string[] {
  const dead: string[] = [];
  for (const { file, line, text } of passages) {
    const lines = text.split('\n');
    lines.forEach((content, offset) => {
      const where = `${file}:${line + offset}`;
      const found = new Set<string>();
      for (const [, target] of content.matchAll(LINK)) {
        const why = deadPath(file, target ?? '', true);
        if (why !== undefined) found.add(why);
      }
      const prose = content.replace(LINK, (_, target: string) => (/^[a-z][a-z0-9+.-]*:/i.test(target) ? ']' : `](${target})`)).replace(URL, ' ');
      for (const [mention] of prose.matchAll(PATH)) {
        const why = deadPath(file, mention, false);
        if (why !== undefined) found.add(why);
      }
      for (const path of found) dead.push(`${where} ${path}`);
    });
  }
  return dead;
}

/** `src/x.ts:12 ./y.ts` → `src/x.ts ./y.ts`: PENDING_SRC_FIXES survives edits that move lines. */
const withoutLine = (entry: string) => entry.replace(/:\d+ /, ' ');

describe('paths named in docs and comments', () => {
  const dead = deadPaths();

  it('reads the docs and the comments it is meant to read', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/architecture.md');
    expect(sources).toContain('src/pipeline/requestPath.ts');
    expect(sources.some((file) => file.startsWith('generated/'))).toBe(false);
    expect(passages.length).toBeGreaterThan(1000);
    expect(lookedUp).toBeGreaterThan(1000);
  });

  it('name files and folders that exist', () => {
    expect(dead.filter((entry) => !PENDING_SRC_FIXES.includes(withoutLine(entry)))).toEqual([]);
  });

  it('leave PENDING_SRC_FIXES with only entries still found (a fixed one leaves the list)', () => {
    expect(PENDING_SRC_FIXES.filter((entry) => !dead.map(withoutLine).includes(entry))).toEqual([]);
  });

  it('see a dead path of each kind (the checks are not vacuous)', () => {
    expect(deadPath('docs/architecture.md', '../src/http/gone.ts', true)).toBe('../src/http/gone.ts');
    expect(deadPath('README.md', 'src/app.ts', false)).toBe('src/app.ts');
    expect(deadPath('src/pipeline/match.ts', './gone.js', false)).toBe('./gone.js');
    expect(deadPath('src/pipeline/match.ts', './exit.js', false)).toBeUndefined();
    expect(deadPath('docs/architecture.md', 'queries/gone.ts', false)).toBe('queries/gone.ts');
    expect(deadPath('docs/architecture.md', 'queries/prepared.ts', false)).toBeUndefined();
    expect(deadPath('src/server.ts', 'app.ts', false)).toBe('app.ts');
    expect(deadPath('README.md', 'handlers/<operationId>.ts', false)).toBeUndefined();
    expect(deadPath('README.md', 'dist/server/server.mjs', false)).toBeUndefined();
  });
});
