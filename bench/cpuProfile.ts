/**
 * Reads a V8 CPU profile (`node --cpu-prof`) of a server under load: self time per request, by
 * where the code lives (our source file, a package, a Node internal, native, GC) and by function.
 * The production server is an esbuild bundle: its source maps give each function's own file back.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  what: string;
  usPerRequest: number;
  /** Of the main thread's busy time (idle left out), in %. */
  pct: number;
}

export interface ProfileSummary {
  /** Main-thread time per request that was not idle, µs. */
  busyUsPerRequest: number;
  byPlace: Share[];
  byFunction: Share[];
}

const maps = new Map<string, SourceMap | undefined>();

function sourceMapOf(url: string): SourceMap | undefined {
  if (!maps.has(url)) {
    const file = `${fileURLToPath(url)}.map`;
    maps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : undefined);
  }
  return maps.get(url);
}

/** Where a frame's code lives: `src/pipeline/match.ts`, `openapi-backend`, `node:_http_outgoing`, `native writev`, `(garbage collector)`. */
function placeOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:').replace(/\/.*$/, '');
  let source = url.startsWith('file:') ? fileURLToPath(url) : url;
  const entry = url.startsWith('file:') ? sourceMapOf(url)?.findEntry(frame.lineNumber, frame.columnNumber) : undefined;
  if (entry && 'originalSource' in entry && typeof entry.originalSource === 'string') source = entry.originalSource;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (inPackage) return inPackage[1]!;
  return source.replace(/^file:\/\//, '').replace(/^.*?\/(src|bench|handlers|generated|client|scripts)\//, '$1/');
}

function shares(totals: Map<string, number>, requests: number, busy: number, top: number): Share[] {
  return [...totals]
    .filter(([what]) => !what.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([what, us]) => ({ what, usPerRequest: Math.round((us / requests) * 100) / 100, pct: Math.round((1000 * us) / busy) / 10 }));
}

export function summariseProfile(file: string, requests: number, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const place = placeOf(node.callFrame);
    if (place !== '(idle)') busy += us;
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const name = `${node.callFrame.functionName || '(anonymous)'} (${place})`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  return { busyUsPerRequest: Math.round((busy / requests) * 100) / 100, byPlace: shares(byPlace, requests, busy, top), byFunction: shares(byFunction, requests, busy, top) };
}
