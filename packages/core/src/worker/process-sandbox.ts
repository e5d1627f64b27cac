/**
 * How a process-isolated worker is spawned, and what that guarantees on this host: the one module
 * and the one table of guarantees (docs/architecture.md §4). The worker host asks `prepareSandbox` once per
 * instance (the host probe runs once per server process) and wraps the child's `node` command line
 * with `sandboxCommand`.
 *
 * On Linux the child runs as
 *   setpriv --pdeathsig KILL --no-new-privs -- prlimit --data=<bytes> --
 *     unshare --user --map-root-user --pid --fork --kill-child --mount-proc [--net] -- /bin/sh (init) -- node ...
 * in its own session (setsid), with an environment built from an allow-list only, its stdout and
 * stderr pipes the server reads (model-output.ts), and, when the server runs as root, as uid/gid
 * 65534. Where 65534 could not reach what the child reads (a folder others may not traverse above
 * it), the child starts in a mount namespace that covers that folder (sandbox-mounts.ts) and drops
 * to 65534 there. Every piece is probed on first use (a container may refuse
 * user namespaces, a host may lack util-linux); what does not work here is reported so the server
 * can name each guarantee that is NOT enforced when it loads such a model. Nothing here is a
 * seccomp filter: Node cannot install one without a native addon.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { dropTo, mountPrefix, mountProbeArgs, planMounts, type Identity, type MountPlan } from './sandbox-mounts.ts';

export type SandboxGuaranteeId = 'signals' | 'environment' | 'network' | 'memory' | 'files' | 'output' | 'engine' | 'cleanup';

export interface SandboxGuarantee {
  readonly id: SandboxGuaranteeId;
  /** What a process-isolated instance cannot do. */
  readonly guarantee: string;
  /** What enforces it where the host allows. */
  readonly mechanism: string;
  /** What is left where that mechanism is unavailable. */
  readonly without: string;
}

/** The table of guarantees of `isolation: 'process'` (the README's sandbox table says the same). */
export const PROCESS_SANDBOX_GUARANTEES: readonly SandboxGuarantee[] = [
  {
    id: 'signals',
    guarantee: 'cannot signal (kill, stop) the server or any process outside its own sandbox',
    mechanism:
      'a PID namespace inside a user namespace (`unshare --user --pid`): no process outside is visible or addressable; its own session, so `kill(0)` reaches only itself',
    without:
      'its own session only; when the server runs as root, the separate uid 65534 still keeps it from signalling the server, but not other sandboxes (same uid)',
  },
  {
    id: 'environment',
    guarantee: 'sees only the environment variables its config allow-lists (`tritium.env`), nothing of the server (NODE_OPTIONS included)',
    mechanism: 'the child is spawned with an environment built from the allow-list',
    without: 'always enforced',
  },
  {
    id: 'network',
    guarantee: 'has no network (no TCP/UDP, not even loopback: the server’s own ports are unreachable) unless `tritium.allow_network` is true',
    mechanism: 'a network namespace holding only a down loopback interface (`unshare --net`)',
    without: 'not enforced: Node’s permission model does not restrict the network',
  },
  {
    id: 'memory',
    guarantee: 'its whole process (V8 heap, ArrayBuffers, native allocations, thread stacks) stays under `tritium.memory_mb`',
    mechanism:
      'RLIMIT_DATA (`prlimit --data`): allocations past it fail (`RangeError: Array buffer allocation failed`) or end the process, never the server',
    without: 'only the V8 heap is capped (`tritium.heap_mb`)',
  },
  {
    id: 'files',
    guarantee:
      'reads only its model folder (and what symbolic links placed there point to), its code and the packages it imports; writes nothing; starts no processes, workers or (unless `tritium.allow_addons`) native addons. Files the server writes for it (uploads, its bundle) are readable by the server and the sandbox’s user only',
    mechanism:
      'Node’s permission model; plus, when the server runs as root, uid/gid 65534, so the kernel too refuses files and Unix sockets that are not world-accessible (the permission model does not check `net.connect(path)`); a folder closed to 65534 above what it reads is covered, in its own mount namespace, by an empty tmpfs holding only those paths. Uploads: 0600/0700 (0640/0750 root:65534 under a root server)',
    without: 'the permission model alone; the child keeps the server’s uid, so Unix sockets that uid may open are reachable',
  },
  {
    id: 'output',
    guarantee:
      'writes to the server’s log only through the server: its stdout and stderr lines are logged attributed (model, version, instance), cut at 64 KiB, at most `--model-log-rate` bytes a second (lines past it dropped and counted); it cannot truncate or rewrite the server’s log',
    mechanism: 'its stdout and stderr are pipes the server reads; it holds none of the server’s file descriptors',
    without: 'always enforced',
  },
  {
    id: 'engine',
    guarantee: 'cannot change V8’s flags (`--allow-natives-syntax` and the like) or start diagnostics that write files (heap snapshots, trace events)',
    mechanism:
      'the worker runtime replaces `v8.setFlagsFromString`, `v8.setHeapSnapshotNearHeapLimit` and `trace_events.createTracing` before the model is imported (every import path reaches the replacement); the permission model refuses `process.binding`',
    without: 'always enforced',
  },
  {
    id: 'cleanup',
    guarantee: 'dies with the server, even when the server is killed with SIGKILL',
    mechanism: 'a parent-death signal (`setpriv --pdeathsig KILL`) and `unshare --kill-child`',
    without: 'it exits when its channel closes, which a busy loop never notices: such a child outlives a killed server',
  },
];

/** What works on this host (probed once per process). */
export interface SandboxHost {
  /** `unshare` when user + PID (+ mount, for /proc) namespaces work for the child's uid. */
  readonly unshare?: string;
  /** Whether `unshare --net` works too. */
  readonly netns: boolean;
  /** `prlimit` when it can bound RLIMIT_DATA. */
  readonly prlimit?: string;
  /** `setpriv` when it can set the parent-death signal. */
  readonly setpriv?: string;
  /** The unprivileged identity the child runs as (the server runs as root). */
  readonly runAs?: { readonly uid: number; readonly gid: number };
  /** `unshare` and `mount`, when a root server can cover folders closed to `runAs` in a mount namespace (sandbox-mounts.ts). */
  readonly mounts?: { readonly unshare: string; readonly mount: string };
  /** Why covering folders does not work here (root server only). */
  readonly mountProblem?: string;
  /** Why a mechanism is missing, per guarantee. */
  readonly problems: Readonly<Partial<Record<SandboxGuaranteeId, string>>>;
}

/** The identity a root server hands the child (`nobody` on Debian and most distributions). */
export const SANDBOX_UID = 65534;

const NAMESPACE_FLAGS = ['--user', '--map-root-user', '--pid', '--fork', '--kill-child', '--mount-proc'];

/**
 * pid 1 of the PID namespace: a shell that runs node as pid 2 and exits with its status. Node must
 * not be pid 1 itself: the kernel drops signals a namespace's init sends itself without a handler,
 * so its own abort() would end as a SIGSEGV, and `kill(process.ppid)` would name its own group.
 * A shell reports a child killed by signal N as exit code 128 + N (see `sandboxExitSignal`); it adds
 * no variable of its own to the environment (PWD is unset).
 */
const INIT = ['/bin/sh', '-c', 'unset PWD OLDPWD; "$@"; s=$?; exit $s', 'tritium-sandbox-init'];

function findTool(name: string): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a probe command; undefined when it exits 0, else why not (first line of its stderr). */
function tryRun(command: string, args: readonly string[], as?: { uid: number; gid: number }): Promise<string | undefined> {
  return new Promise((resolve) => {
    let stderr = '';
    let child;
    try {
      child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {}, detached: true, timeout: 20_000, ...(as ?? {}) });
    } catch (error) {
      resolve((error as Error).message);
      return;
    }
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk;
    });
    child.once('error', (error) => resolve(error.message));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(undefined);
      else {
        const line = stderr.trim().split('\n')[0] ?? '';
        resolve(`${signal ? `killed by ${signal}` : `exit code ${code}`}${line ? `: ${line}` : ''}`);
      }
    });
  });
}

type MaybeIdentity = Identity | undefined;

/** One round of probes for the tools, all at once, run as `as`. */
async function probeTools(node: string, as: MaybeIdentity) {
  const run = async (name: string, args: (tool: string) => string[], what: string) => {
    const tool = findTool(name);
    if (!tool) return { why: `${name} (util-linux) not found` };
    const why = await tryRun(tool, args(tool), as);
    return why ? { tool, why: `${what} failed: ${why}` } : { tool };
  };
  const [prlimit, setpriv, unshareNet] = await Promise.all([
    run('prlimit', () => ['--data=1073741824', '--', node, '-e', '0'], 'prlimit --data'),
    run('setpriv', () => ['--pdeathsig', 'KILL', '--no-new-privs', '--', node, '-e', '0'], 'setpriv --pdeathsig'),
    run('unshare', () => [...NAMESPACE_FLAGS, '--net', '--', node, '-e', '0'], 'unshare --net'),
  ]);
  return { prlimit, setpriv, unshareNet };
}

async function probe(): Promise<SandboxHost> {
  const problems: Partial<Record<SandboxGuaranteeId, string>> = {};
  if (process.platform !== 'linux') {
    const why = `not available on ${process.platform} (Linux only)`;
    return { netns: false, problems: { signals: why, network: why, memory: why, cleanup: why } };
  }
  const node = process.execPath;
  let runAs: MaybeIdentity = process.getuid?.() === 0 ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : undefined;
  // The usual case takes one round of short runs, all at once.
  const [nobodyWhy, first] = await Promise.all([runAs ? tryRun(node, ['-e', '0'], runAs) : undefined, probeTools(node, runAs)]);
  let tools = first;
  if (nobodyWhy) {
    problems.files = `uid ${SANDBOX_UID} cannot run ${node} (${nobodyWhy}); the sandbox keeps the server's uid`;
    runAs = undefined;
    tools = await probeTools(node, undefined);
  }
  if (tools.prlimit.why) problems.memory = tools.prlimit.why;
  if (tools.setpriv.why) problems.cleanup = tools.setpriv.why;

  let unshare: string | undefined;
  let netns = false;
  const tool = tools.unshareNet.tool;
  if (!tool) {
    problems.signals = tools.unshareNet.why;
    problems.network = tools.unshareNet.why;
  } else {
    const attempt = async (as: MaybeIdentity, withNet: string | undefined): Promise<boolean> => {
      if (!withNet) {
        netns = true;
        return true;
      }
      const withoutNet = await tryRun(tool, [...NAMESPACE_FLAGS, '--', node, '-e', '0'], as);
      if (withoutNet) {
        problems.signals = `user/PID namespaces are refused here (unshare: ${withoutNet})`;
        problems.network = problems.signals;
        return false;
      }
      problems.network = `network namespaces are refused here (${withNet})`;
      return true;
    };
    if (await attempt(runAs, tools.unshareNet.why)) unshare = tool;
    else if (runAs && (await attempt(undefined, await tryRun(tool, [...NAMESPACE_FLAGS, '--net', '--', node, '-e', '0'])))) {
      // Namespaces work for root only (e.g. unprivileged user namespaces are switched off): they
      // guard more (signals, network) than the separate uid does, so keep them.
      unshare = tool;
      problems.files = `user namespaces are refused to uid ${SANDBOX_UID} here; the sandbox keeps the server's uid`;
      runAs = undefined;
      delete problems.signals;
      if (netns) delete problems.network;
    }
  }
  if (!unshare && runAs) {
    problems.signals = `${problems.signals ?? 'no PID namespace'}; the separate uid ${SANDBOX_UID} still protects the server, not other sandboxes`;
  }
  const setpriv = tools.setpriv.tool && !tools.setpriv.why ? tools.setpriv.tool : undefined;
  const mount = runAs && tool && setpriv ? await probeMounts(tool, setpriv, runAs, node) : undefined;
  return {
    netns,
    problems,
    ...(mount?.tool && tool ? { mounts: { unshare: tool, mount: mount.tool } } : {}),
    ...(mount?.why ? { mountProblem: mount.why } : {}),
    ...(unshare ? { unshare } : {}),
    ...(tools.prlimit.tool && !tools.prlimit.why ? { prlimit: tools.prlimit.tool } : {}),
    ...(setpriv ? { setpriv } : {}),
    ...(runAs ? { runAs } : {}),
  };
}

/** Whether root may cover a folder in a mount namespace and then run node as `as` (sandbox-mounts.ts). */
async function probeMounts(unshare: string, setpriv: string, as: Identity, node: string): Promise<{ tool?: string; why?: string }> {
  const mount = findTool('mount');
  if (!mount) return { why: 'mount (util-linux) not found' };
  const why = await tryRun(unshare, mountProbeArgs(mount, tmpdir(), setpriv, as, [node, '-e', '0']));
  return why ? { why: `mount namespaces are refused here (${why})` } : { tool: mount };
}

let probed: Promise<SandboxHost> | undefined;

/** What the sandbox can use on this host; probed once per process (a few short `node -e 0` runs). */
export function probeSandboxHost(): Promise<SandboxHost> {
  probed ??= probe();
  return probed;
}

/** What one process-isolated instance asks of its sandbox. */
export interface SandboxRequest {
  /** `tritium.allow_network`: keep the host's network (no network namespace). */
  readonly allowNetwork?: boolean;
  /** Whole-process memory bound, MiB (RLIMIT_DATA). */
  readonly memoryLimitMb?: number;
  /** Everything the child must read (the permission model's allow-list, its script, node). */
  readonly readPaths: readonly string[];
}

/** How to spawn one instance's child, and which guarantees it will NOT have here. */
export interface SandboxSpec {
  readonly host: SandboxHost;
  readonly request: SandboxRequest;
  /** The identity the child runs as (root server only). */
  readonly runAs?: { readonly uid: number; readonly gid: number };
  /** Folders covered so that `runAs` reaches what it reads (sandbox-mounts.ts); absent when none is needed. */
  readonly mounts?: MountPlan;
  /** Guarantees of PROCESS_SANDBOX_GUARANTEES that this child lacks, each with the reason. */
  readonly unenforced: readonly { readonly id: SandboxGuaranteeId; readonly why: string }[];
}

/** Decides how to sandbox one instance on `host` (pure, apart from reading file modes). */
export function sandboxSpec(host: SandboxHost, request: SandboxRequest): SandboxSpec {
  const unenforced: { id: SandboxGuaranteeId; why: string }[] = [];
  const add = (id: SandboxGuaranteeId, why: string | undefined): void => {
    if (why) unenforced.push({ id, why });
  };
  add('signals', host.problems.signals);
  if (!request.allowNetwork && !host.netns) add('network', host.problems.network ?? 'no network namespace');
  if (request.memoryLimitMb !== undefined && !host.prlimit) add('memory', host.problems.memory ?? 'no RLIMIT_DATA');
  let runAs = host.runAs;
  let mounts: MountPlan | undefined;
  if (runAs) {
    const plan = planMounts(request.readPaths, runAs);
    const cover = plan.covers[0];
    if (plan.unreadable.length > 0) {
      add('files', `uid ${runAs.uid} could not read ${plan.unreadable[0]}; the sandbox keeps the server's uid`);
      runAs = undefined;
    } else if (cover && !host.mounts) {
      const why = host.mountProblem ?? 'no mount namespace';
      add('files', `uid ${runAs.uid} could not reach ${join(cover.dir, cover.binds[0]!.rel)} (${cover.dir} is closed to others) and ${why}; the sandbox keeps the server's uid`);
      runAs = undefined;
    } else if (cover) mounts = plan;
  } else add('files', host.problems.files);
  add('cleanup', host.problems.cleanup);
  return { host, request, ...(runAs ? { runAs } : {}), ...(mounts ? { mounts } : {}), unenforced };
}

/** Probes the host (once) and decides how to sandbox one instance. */
export async function prepareSandbox(request: SandboxRequest): Promise<SandboxSpec> {
  return sandboxSpec(await probeSandboxHost(), request);
}

/**
 * The command line that starts `nodeArgv` (`[node, ...flags, script]`) inside the sandbox, from the
 * folder `cwd` (the child starts there where it can). With covers (`spec.mounts`) it runs as root
 * until they are made, and `setpriv` drops it to `spec.runAs`; else it is spawned as
 * {@link spawnIdentity}.
 */
export function sandboxCommand(spec: SandboxSpec, nodeArgv: readonly string[], cwd = process.cwd()): { command: string; args: string[] } {
  let argv = [...nodeArgv];
  const { host, request } = spec;
  if (host.unshare) argv = [host.unshare, ...NAMESPACE_FLAGS, ...(request.allowNetwork || !host.netns ? [] : ['--net']), '--', ...INIT, ...argv];
  if (host.prlimit && request.memoryLimitMb !== undefined) {
    argv = [host.prlimit, `--data=${Math.floor(request.memoryLimitMb * 1024 * 1024)}`, '--', ...argv];
  }
  const drop = spec.mounts && spec.runAs ? dropTo(spec.runAs) : [];
  if (host.setpriv) argv = [host.setpriv, ...drop, '--pdeathsig', 'KILL', '--no-new-privs', '--', ...argv];
  if (spec.mounts && host.mounts && host.setpriv) {
    // The parent-death signal from the start: the covers take a few runs of `mount`.
    argv = [host.setpriv, '--pdeathsig', 'KILL', '--', ...mountPrefix(host.mounts, spec.mounts, cwd), ...argv];
  }
  return { command: argv[0]!, args: argv.slice(1) };
}

/** The uid/gid to spawn the sandbox's command with: `runAs`, unless the command drops to it itself (covers). */
export function spawnIdentity(spec: SandboxSpec): { uid: number; gid: number } | undefined {
  return spec.mounts ? undefined : spec.runAs;
}

/**
 * The signal that ended a sandboxed node, read from its init shell's exit code (128 + N), or
 * undefined for a plain exit. (A model calling `process.exit(134)` reads as SIGABRT, as in a shell.)
 */
export function sandboxExitSignal(spec: SandboxSpec, code: number | null): NodeJS.Signals | undefined {
  if (!spec.host.unshare || code === null || code <= 128) return undefined;
  const n = code - 128;
  return (Object.keys(constants.signals) as NodeJS.Signals[]).find((name) => constants.signals[name] === n);
}

/** One log line naming each guarantee `spec` lacks (empty when all hold). */
export function describeUnenforced(spec: SandboxSpec): string {
  return spec.unenforced.map((u) => `${u.id} (${u.why})`).join('; ');
}
