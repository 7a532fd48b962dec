/**
 * The one process helper of the scripts and the tests: start a command, collect what it prints,
 * pick a port, wait until something answers, stop it. Nothing here knows what the command is.
 *
 * Why ours: execa would spawn and capture, get-port would pick a port and wait-on would poll, but
 * each covers one of these, and none fails fast with the child's output when the child dies
 * before it answers, which is what a test or a script needs to report.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Settles when the process has exited. */
  exited: Promise<Exit>;
  running(): boolean;
}

export interface StartOptions extends SpawnOptions {
  /** Also pass what the process prints on to this process's stdout (a script showing its child). */
  echo?: boolean;
}

/** Starts `command` with stdout and stderr captured (stdin closed). */
export function startProcess(command: string, args: readonly string[], options: StartOptions = {}): RunningProcess {
  const { echo = false, ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let done = false;
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (echo) process.stdout.write(chunk);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (error) => {
      output += `\n[spawn error] ${error.message}\n`;
      done = true;
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return { child, output: () => output, exited, running: () => !done };
}

/** A TCP port that was free a moment ago on `host` (the OS picks it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer().listen({ host, port: 0 });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

/**
 * Requests `url` every `intervalMs` until it gets any HTTP response, and returns that response.
 * Fails as soon as the process exits, with its output. The overall limit is the caller's (a hook
 * timeout; or stopping the process, which ends the wait). A benchmark timing a start-up of a few
 * hundred ms polls every few ms.
 */
export async function waitForHttp(url: string, proc: RunningProcess, init: RequestInit = {}, intervalMs = 150): Promise<Response> {
  for (;;) {
    if (!proc.running()) throw new Error(`The process exited before ${url} answered:\n${proc.output()}`);
    try {
      return await fetch(url, init);
    } catch {
      await sleep(intervalMs);
    }
  }
}

/** Waits until `pattern` appears in the process's output (its first group), or fails with the output. */
export async function waitForOutput(proc: RunningProcess, pattern: RegExp, limitMs = 20_000): Promise<string> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const match = pattern.exec(proc.output());
    if (match) return match[1] ?? match[0];
    if (!proc.running()) throw new Error(`The process exited before printing ${pattern}:\n${proc.output()}`);
    if (Date.now() > deadline) throw new Error(`No ${pattern} in the output within ${limitMs} ms:\n${proc.output()}`);
    await sleep(50);
  }
}

/** Whether something accepts TCP connections on host:port right now. */
export async function isListening(host: string, port: number): Promise<boolean> {
  const socket = connect({ host, port });
  return once(socket, 'connect').then(() => true, () => false).finally(() => socket.destroy());
}

/** Whether any process of the group led by `pid` (a child started with `detached: true`) is still alive. */
export function processGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once something accepts connections on host:port; false if `gaveUp()` turns true first. */
export async function waitForPort(host: string, port: number, gaveUp: () => boolean): Promise<boolean> {
  while (!gaveUp()) {
    if (await isListening(host, port)) return true;
    await sleep(100);
  }
  return false;
}

/** Why host:port cannot be listened on (e.g. EADDRINUSE), or undefined when it can. */
export function listenProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * Sends `signal` (if the process still runs) and waits for it to exit; SIGKILL after `killAfterMs`
 * so a stuck process cannot hold up the run.
 */
export async function stopProcess(proc: RunningProcess, signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 10_000): Promise<Exit> {
  if (!proc.running()) return proc.exited;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), killAfterMs);
  try {
    return await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}
