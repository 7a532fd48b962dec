/**
 * Where a CPU profile's samples go, by stage of the request path (bench/stages.ts). A sample belongs to the first frame of ours or of a library on
 * its stack, counted from the leaf: a socket write under node-postgres is the driver's, under
 * respond.ts it is the response's. Samples with nothing but Node's own frames are HTTP parsing,
 * socket I/O or the event loop, by Node's module.
 */
import { projectRoot } from '../src/paths.js';
import { callTree, samplesIn, type CpuProfile } from './cpuProfile.js';


/** Where a file belongs, for a frame of ours or of a library; undefined for Node's own and native frames. */
function stageOfFile(url: string, fn: string): string | undefined {
  const file = url.replace(/^file:\/\//, '');
  const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1];
  if (lib) {
    if (lib === 'better-sqlite3') return 'driver (better-sqlite3)';
    if (lib.startsWith('pg')) return 'driver (node-postgres)';
    // V8's profiler shows no frame for a native call: better-sqlite3's Statement#all runs in
    // the frame that calls it, Kysely's SQLite driver or our direct runner (database.ts).
    if (lib === 'kysely') return /sqlite-driver/.test(file) && fn === 'executeQuery' ? 'SQLite (in the calling frame)' : 'Kysely';
    if (lib === 'ajv' || lib === 'ajv-formats' || lib === 'fast-uri') return 'validation (Ajv)';
    if (lib === 'openapi-backend' || lib === 'qs' || lib === 'bath-es5' || lib === 'cookie') return 'routing + parameters (openapi-backend)';
    if (lib === 'raw-body' || lib === 'content-type' || lib === 'iconv-lite') return 'request body';
    if (lib === 'prom-client') return 'metrics';
    if (lib === 'pino' || lib.startsWith('pino') || lib === 'sonic-boom') return 'logging';
    if (lib === 'tsx' || lib === 'esbuild') return undefined;
    return `library ${lib}`;
  }
  if (!file.startsWith(projectRoot)) return undefined;
  const local = file.slice(projectRoot.length + 1);
  if (local === 'src/http/etag.ts') return 'ETag';
  if (local === 'src/http/numerals.ts' || local === 'src/http/validation.ts') return 'validation (Ajv)';
  if (local === 'src/http/security.ts' || local.startsWith('src/auth/')) return 'API key check';
  if (local === 'src/http/body.ts') return 'request body';
  if (local === 'src/cursor.ts') return 'cursor (HMAC)';
  if (local === 'src/store/database.ts' && fn === 'runOnSqliteStatements') return 'SQLite (in the calling frame)';
  if (local.startsWith('src/store/') || local.startsWith('handlers/')) return 'handler + store (ours)';
  if (local === 'src/http/respond.ts') return fn === 'writeJson' ? 'serialise + write response' : 'respond (contract check off, headers)';
  if (local === 'src/http/exchange.ts' || local === 'src/http/securityHeaders.ts') return 'exchange (request id, security headers)';
  if (local === 'src/http/api.ts') return 'API adapter (api.ts)';
  if (local === 'src/http/app.ts' || local === 'src/http/listen.ts') return 'lanes (app.ts, listen.ts)';
  return `project ${local}`;
}

/** Samples with only Node's frames (or none): by the outermost module that says what it is. */
function stageOfCore(frames: { fn: string; url: string }[]): string {
  const leaf = frames[0];
  if (leaf?.fn === '(garbage collector)') return 'GC (main thread)';
  if (leaf?.fn === '(program)') return '(program: native, not attributed)';
  for (const f of frames) {
    if (/_http_(server|common|incoming)/.test(f.url)) return 'HTTP parse + dispatch (node core)';
    if (/_http_outgoing/.test(f.url)) return 'serialise + write response';
  }
  for (const f of frames) if (/node:(net|stream|internal\/stream)/.test(f.url)) return 'socket I/O (node core)';
  return 'other node core + event loop';
}

export function stagesOf(profile: CpuProfile, window: { from: number; to: number }): { busyUs: number; stages: Map<string, number>; leaves: Map<string, number> } {
  const { byId, parent } = callTree(profile);
  const cache = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    const cached = cache.get(id);
    if (cached !== undefined) return cached;
    const frames: { fn: string; url: string }[] = [];
    let stage: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName: fn, url } = byId.get(cur)!.callFrame;
      if (fn === '(idle)') break;
      frames.push({ fn, url });
      stage = url ? stageOfFile(url, fn) : undefined;
      if (stage) break;
    }
    const result = frames[0]?.fn === '(idle)' || frames.length === 0 ? null : (stage ?? stageOfCore(frames));
    cache.set(id, result);
    return result;
  };
  const stages = new Map<string, number>();
  const leaves = new Map<string, number>();
  let busyUs = 0;
  for (const { id, us } of samplesIn(profile, window)) {
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    const stage = classify(id);
    if (stage === null) continue;
    busyUs += us;
    stages.set(stage, (stages.get(stage) ?? 0) + us);
    const { functionName, url } = byId.get(id)!.callFrame;
    const leaf = `${stage}: ${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(`file://${projectRoot}/`, '')}`;
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + us);
  }
  return { busyUs, stages, leaves };
}

