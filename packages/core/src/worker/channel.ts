/**
 * One live worker (thread or child process) seen as a message channel that reports its own death
 * once, with a human-readable cause. The host builds one Channel per (re)start.
 */
import { Worker } from 'node:worker_threads';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BRAND, isProtocolMessage, type FromWorker, type ToWorkerBody } from './protocol.ts';
import type { WorkerResourceLimits } from './types.ts';
import { sandboxCommand, sandboxExitSignal, spawnIdentity, type SandboxSpec } from './process-sandbox.ts';
import { CHILD_CHANNEL_FD, encodeFrame, FrameReader, MAX_FRAME_BYTES } from './frames.ts';
import { trackThread } from './live-threads.ts';

export interface ChannelHandlers {
  message(msg: FromWorker): void;
  /** Called once when the worker is gone (crash, exit, kill). `cause` reads after "crashed: ". */
  died(cause: string): void;
}

export interface Channel {
  /** The child's pid as the server sees it (process isolation: the outermost process of its sandbox). */
  readonly pid?: number;
  /** Whether `send` honours a transfer list (threads) or always copies (a child process's channel). */
  readonly canTransfer: boolean;
  send(msg: ToWorkerBody, transfer?: ArrayBuffer[]): void;
  /** Keep the event loop alive while work is outstanding; let the process exit when idle. */
  keepAlive(on: boolean): void;
  /** Forcibly stops the worker; resolves once it is gone. No `died` call follows a kill. */
  kill(): Promise<void>;
  /** Resolves when the worker has exited, for whatever reason. */
  readonly exited: Promise<void>;
}

function heapCause(detail: string): string {
  return `worker exceeded its heap limit (${detail})`;
}

/** V8's heap-limit report, and what a failed native allocation under RLIMIT_DATA prints before the process aborts. */
/**
 * The permission model's flag: `--permission` since Node 22.13 (the only one Node 24 takes),
 * `--experimental-permission` before.
 */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';

const HEAP_OOM = /heap out of memory|Reached heap limit/i;
/**
 * V8 also reports "JavaScript heap out of memory" when the OS refuses to commit heap pages ("Committing
 * semi space failed", with a heap of a few MB): under RLIMIT_DATA that is the process's memory limit,
 * not its heap limit. Only these reasons mean the heap itself was full.
 */
const HEAP_LIMIT_REACHED = /Reached heap limit|near heap limit/i;
const NATIVE_OOM = /std::bad_alloc|Fatal process out of memory|Fatal JavaScript invalid size error|allocation failed - process out of memory/i;

export function spawnThread(
  opts: {
    /** The compiled worker runtime. */
    script: URL;
    resourceLimits?: WorkerResourceLimits;
    env?: Readonly<Record<string, string | undefined>>;
    execArgv?: readonly string[];
    /**
     * Reads the thread's stdout and stderr (see model-output.ts), so what a model prints reaches the
     * log attributed, as a child's does. Without it they go to the process's own.
     */
    output?: { attach(stdout: Readable, stderr: Readable): void };
  },
  handlers: ChannelHandlers,
): Channel {
  const worker = new Worker(opts.script, {
    resourceLimits: opts.resourceLimits ? { ...opts.resourceLimits } : undefined,
    env: opts.env ? { ...opts.env } : { ...process.env },
    execArgv: [...(opts.execArgv ?? [])],
    stdout: opts.output !== undefined,
    stderr: opts.output !== undefined,
  });
  trackThread(worker);
  if (opts.output) opts.output.attach(worker.stdout, worker.stderr);
  let gone = false;
  let killed = false;
  const die = (cause: string): void => {
    if (gone) return;
    gone = true;
    if (!killed) handlers.died(cause);
  };
  worker.on('message', (m: unknown) => {
    if (isProtocolMessage(m)) handlers.message(m as FromWorker);
  });
  worker.on('error', (err: Error & { code?: string }) => {
    if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY') die(heapCause('ERR_WORKER_OUT_OF_MEMORY'));
    else die(`worker threw: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    // The thread may still be unwinding; make sure it is gone.
    void worker.terminate();
  });
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      die(`worker exited with code ${code}`);
      resolve();
    }),
  );
  return {
    canTransfer: true,
    exited,
    send(msg, transfer) {
      if (!gone) worker.postMessage({ brand: BRAND, ...msg }, transfer ?? []);
    },
    keepAlive(on) {
      if (on) worker.ref();
      else worker.unref();
    },
    async kill() {
      killed = true;
      await worker.terminate();
      await exited;
    },
  };
}

export interface ProcessChannelOptions {
  /** The compiled worker runtime. */
  script: URL;
  resourceLimits?: WorkerResourceLimits;
  env?: Readonly<Record<string, string | undefined>>;
  execArgv?: readonly string[];
  allowRead: readonly string[];
  /**
   * Reads the child's stdout and stderr (see model-output.ts); `muted()` turns true once the child
   * is dying of an out-of-memory. Without it both are read and dropped.
   */
  output?: { attach(stdout: Readable, stderr: Readable, muted: () => boolean): void };
  /** How to wrap the child (see process-sandbox.ts); without it node runs unwrapped, in its own session. */
  sandbox?: SandboxSpec;
}

/** Node's flags for the child: the permission model's read grants, its heap and stack bounds, the caller's own. */
function childNodeFlags(opts: ProcessChannelOptions): string[] {
  const limits = opts.resourceLimits ?? {};
  return [
    PERMISSION_FLAG,
    // Node 20 grants a folder's contents only through a trailing wildcard, and only one path per flag.
    ...opts.allowRead.map((p) => `--allow-fs-read=${p.endsWith('*') || /\.[cm]?[jt]s$|\.json$/.test(p) ? p : `${p.replace(/\/$/, '')}/*`}`),
    '--no-warnings=ExperimentalWarning',
    ...(limits.maxOldGenerationSizeMb ? [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`] : []),
    ...(limits.maxYoungGenerationSizeMb ? [`--max-semi-space-size=${Math.max(1, Math.floor(limits.maxYoungGenerationSizeMb / 2))}`] : []),
    ...(limits.stackSizeMb ? [`--stack-size=${Math.floor(limits.stackSizeMb * 1024)}`] : []),
    ...(opts.execArgv ?? []),
  ];
}

/** What the child's stderr said about memory as it died (V8's out-of-memory report names the cause). */
interface OomSigns {
  heapLimit: boolean;
  heapOom: boolean;
  nativeOom: boolean;
}

function watchOomSigns(stderr: Readable): OomSigns {
  const signs: OomSigns = { heapLimit: false, heapOom: false, nativeOom: false };
  // The report itself (GC trace, native stack) is noise; only its cause is kept.
  stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString('latin1');
    if (HEAP_LIMIT_REACHED.test(text)) signs.heapLimit = true;
    if (HEAP_OOM.test(text)) signs.heapOom = true;
    else if (NATIVE_OOM.test(text)) signs.nativeOom = true;
  });
  return signs;
}

/** Why the child exited, as the host reports it: out of memory, its last uncaught throw, a signal or its code. */
function exitCause(
  signs: OomSigns,
  lastThrow: string | undefined,
  code: number | null,
  signal: NodeJS.Signals | null,
  opts: ProcessChannelOptions,
): string {
  const memoryLimitMb = opts.sandbox?.request.memoryLimitMb;
  // Without a process memory limit every heap report is the heap limit's.
  if (signs.heapOom && (signs.heapLimit || memoryLimitMb === undefined)) return heapCause('JavaScript heap out of memory');
  if (signs.heapOom || signs.nativeOom) {
    return `worker exceeded its memory limit${memoryLimitMb !== undefined ? ` (${memoryLimitMb} MB for the whole process)` : ''}: a native allocation failed`;
  }
  if (lastThrow !== undefined) return `worker threw: ${lastThrow}`;
  const killedBy = signal ?? (opts.sandbox ? sandboxExitSignal(opts.sandbox, code) : undefined);
  return killedBy ? `worker process killed by ${killedBy}` : `worker exited with code ${code}`;
}

/** Starts the worker's child process: the sandbox's command when there is one, node otherwise. */
function spawnChild(opts: ProcessChannelOptions): ChildProcess {
  const nodeArgv = [process.execPath, ...childNodeFlags(opts), fileURLToPath(opts.script)];
  const { command, args } = opts.sandbox ? sandboxCommand(opts.sandbox, nodeArgv) : { command: process.execPath, args: nodeArgv.slice(1) };
  return spawn(command, args, {
    // Only what the caller allow-listed: nothing of the server's environment (NODE_OPTIONS included).
    env: { ...(opts.env ?? {}) },
    // stdout and stderr are pipes the server reads: the server's own fds 1 and 2 (its log) stay out
    // of the child's reach (it could truncate them, or write at any offset). fd 3: the channel,
    // framed by frames.ts (not Node's 'ipc', whose parser trusts the child's bytes).
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    // Its own session and process group: kill(0) from the child reaches only its own group. (On
    // Windows `detached` would open a console instead; there is no process group to escape there.)
    detached: process.platform !== 'win32',
    ...((opts.sandbox && spawnIdentity(opts.sandbox)) ?? {}),
  });
}

/**
 * Reads the child's stdout and stderr (into the model's log when `opts.output` is set, else they are
 * drained), watching stderr for the out-of-memory report.
 */
function readOutput(child: ChildProcess, opts: ProcessChannelOptions): OomSigns {
  const oom = watchOomSigns(child.stderr!);
  if (opts.output) opts.output.attach(child.stdout!, child.stderr!, () => oom.heapOom || oom.nativeOom);
  else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  return oom;
}

/** Kills the child's whole process group (the sandbox's wrappers and node), not only its first process. */
function killGroup(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

export function spawnProcess(opts: ProcessChannelOptions, handlers: ChannelHandlers): Channel {
  const child = spawnChild(opts);
  const memoryLimitMb = opts.sandbox?.request.memoryLimitMb;
  let gone = false;
  let killed = false;
  let lastThrow: string | undefined;
  const die = (cause: string): void => {
    if (gone) return;
    gone = true;
    if (!killed) handlers.died(cause);
  };
  const oom = readOutput(child, opts);
  const channel = child.stdio[CHILD_CHANNEL_FD] as Socket;
  // No honest message outgrows the child's whole memory: it holds each one serialized to send it.
  // The same bound caps what the host queues for a child that stops reading.
  const maxBytes = memoryLimitMb !== undefined ? Math.min(MAX_FRAME_BYTES, Math.floor(memoryLimitMb * 1024 * 1024)) : MAX_FRAME_BYTES;
  /** What the child wrote or left unread breaks the channel: it goes, as after any malformed message. */
  const refuse = (cause: string): void => {
    channel.destroy();
    die(cause);
    killGroup(child);
  };
  const onMessage = (m: unknown): void => {
    if (!isProtocolMessage(m)) return;
    const msg = m as FromWorker;
    // The child reports its own uncaught exception just before exiting; keep it for the cause.
    // (Any message may be forged by the child's code: nothing here may throw; the host checks the rest.)
    const message: unknown = msg.t === 'fatal' ? (msg.error as { message?: unknown } | null)?.message : undefined;
    if (typeof message === 'string' && message.startsWith('uncaught: ')) {
      lastThrow = message.slice('uncaught: '.length, 'uncaught: '.length + 4096);
      return;
    }
    handlers.message(msg);
  };
  const reader = new FrameReader(maxBytes, onMessage, (why) => refuse(`worker ${why}`));
  channel.on('data', (chunk: Buffer) => reader.push(chunk));
  // Its end closing is seen as the child's exit, and a write to it failing (EPIPE) likewise.
  channel.on('error', () => {});
  child.on('error', (err) => die(`worker process failed: ${err.message}`));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      die(exitCause(oom, lastThrow, code, signal, opts));
      resolve();
    }),
  );
  return {
    pid: child.pid,
    canTransfer: false,
    exited,
    send(msg) {
      if (gone || channel.destroyed) return;
      if (channel.writableLength > maxBytes) {
        // A child that stopped reading (a busy loop, while its own messages ask for replies) would
        // otherwise make the server queue without end.
        const queued = channel.writableLength;
        queueMicrotask(() => refuse(`worker stopped reading its channel: ${queued} bytes queued for it, over the bound of ${maxBytes}`));
        return;
      }
      channel.write(encodeFrame({ brand: BRAND, ...msg }));
    },
    keepAlive(on) {
      const handles = [channel, child.stdout, child.stderr] as ({ ref?(): void; unref?(): void } | null)[];
      if (on) child.ref();
      else child.unref();
      for (const h of handles) {
        if (on) h?.ref?.();
        else h?.unref?.();
      }
    },
    async kill() {
      killed = true;
      killGroup(child);
      await exited;
    },
  };
}
