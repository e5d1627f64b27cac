/**
 * `tritium model run <repository>/<model> --input NAME=<json> ...`: runs any model of a repository
 * — a model.ts, an ONNX model, an ensemble — once, offline: core's InferenceServer loads it (and
 * an ensemble's composing models) exactly as `tritium serve` would, one request goes through it,
 * and the response(s) print as JSON on stdout. Nothing listens on the network.
 *
 * stdout carries only that JSON. Whatever the model prints goes to stderr: the work runs in a
 * child process whose fd 1 is our fd 2 (a model's console.log reaches fd 1 from a worker thread,
 * a process-isolated child or native code alike), and the result comes back over IPC.
 */
import { spawn } from 'node:child_process';
import type { ServeOptions } from './serve-options.ts';
import type { ModelRunResult, RunArgs } from './model-run.ts';
import { modelLineText, type DevRunReply } from '../dev/dev-protocol.ts';
import { askDevServer } from './dev-client.ts';

const USAGE = `usage: tritium model run <repository>/<model> --input NAME=<json> [--input NAME=<json> ...] [options]

Loads the model from its repository as \`tritium serve\` would (an ensemble with the models its
steps name), runs one request through it offline, prints the response(s) as JSON on stdout and
unloads. What the model prints (console.log) and the server's warnings go to stderr.

  <json>              a nested array, read in the shape the config implies: with dims [1] and
                      batching, TEXT=["a","b"] is two rows ([2,1]); with dims [-1], [1,2,3] is one
                      row ([1,3]); an array with the batch dimension is taken as written. Or
                      {"shape": [..], "data": [..]}. The datatype comes from the config
  --version N         the version to run (default: the highest its version policy serves)
  --output NAME       return only this output (repeatable)
  --verbose           the server's info log too (loading, the model table)
  --cold              load the model here even when a tritium dev serves its repository
  --model-config-name <name>, --disable-auto-complete-config, --backend-config <backend>,<k>=<v>,
  --model-type-check error|warn|off
                      as for serve

When \`tritium dev\` serves the model's repository, the run is answered by it (warm: nothing loads;
the lines the models wrote meanwhile come on stderr). Otherwise, or with one of serve's flags above,
the model loads here, runs once and unloads.

examples:
  tritium model run model_repository/tokenizer --input 'TEXT=["I love this movie"]'
  tritium model run model_repository/sentiment_ensemble --input 'TEXT=["I love this movie"]'
`;

const SERVE_FLAGS = ['model-config-name', 'disable-auto-complete-config', 'strict-model-config', 'backend-config', 'model-type-check'];
/** Set in the child that does the work (see the file comment). */
const CHILD_ENV = 'TRITIUM_MODEL_RUN_CHILD';

/** The run's own arguments (serve's flags already taken out). */
type RunOwnArgs = Omit<RunArgs, 'serve'> & { readonly cold: boolean };

function parseRunArgs(rest: readonly string[]): RunOwnArgs | string {
  let folder: string | undefined;
  const inputs: Record<string, unknown> = {};
  const outputs: string[] = [];
  let version: number | undefined;
  let verbose = false;
  let cold = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? rest[++i];
    if (flag === '--input' || flag === '-i') {
      const spec = value();
      const eq = spec?.indexOf('=') ?? -1;
      if (!spec || eq <= 0) return `--input expects NAME=<json>, got '${spec ?? ''}'`;
      const name = spec.slice(0, eq);
      try {
        inputs[name] = JSON.parse(spec.slice(eq + 1));
      } catch (error) {
        return `--input ${name}: invalid JSON (${(error as Error).message})`;
      }
    } else if (flag === '--output' || flag === '-o') {
      const name = value();
      if (!name) return '--output expects a name';
      outputs.push(name);
    } else if (flag === '--version') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 1) return `--version expects a positive integer`;
      version = v;
    } else if (flag === '--verbose') {
      verbose = true;
    } else if (flag === '--cold') {
      cold = true;
    } else if (flag.startsWith('-')) {
      return `unknown option '${flag}'`;
    } else if (folder === undefined) {
      folder = arg;
    } else {
      return `unexpected argument '${arg}'`;
    }
  }
  if (!folder) return 'missing <repository>/<model>';
  return { folder, inputs, outputs, verbose, cold, ...(version !== undefined ? { version } : {}) };
}

/** With serve's flags (they need the server's code, so only the cold path parses them). */
async function parseArgs(args: string[]): Promise<RunArgs | string> {
  const { FlagError, parseSomeServeFlags } = await import('./flags.ts');
  let parsed: { options: ServeOptions; rest: string[] };
  try {
    parsed = parseSomeServeFlags(args, SERVE_FLAGS);
  } catch (e) {
    if (e instanceof FlagError) return e.message;
    throw e;
  }
  const own = parseRunArgs(parsed.rest);
  return typeof own === 'string' ? own : { ...own, serve: parsed.options };
}

/** Serve's flags change how a model loads: a run that names one loads it itself. */
function namesServeFlag(args: readonly string[]): boolean {
  return args.some((a) => SERVE_FLAGS.includes(a.replace(/^--/, '').split('=')[0]!) && a.startsWith('--'));
}

/** Prints a dev server's answer as the cold path would; resolves with the exit code. */
function printDevReply(reply: DevRunReply, verbose: boolean): number {
  const lines = reply.logs.filter((l) => l.level !== 'verbose' || verbose).map((l) => `${modelLineText(l)}\n`);
  process.stderr.write(lines.join(''));
  if (!reply.ok) {
    process.stderr.write(`tritium model run: ${reply.code}: ${reply.message}\n`);
    return 1;
  }
  process.stdout.write(`${formatJson(reply.result)}\n`);
  return 0;
}

/** Indented JSON with arrays of plain values kept on one line (shapes and data stay readable). */
function formatJson(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
    const inner = indent + '  ';
    return `[\n${value.map((v) => inner + formatJson(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const inner = indent + '  ';
    const entries = Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${formatJson(v, inner)}`);
    return `{\n${entries.join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

type ChildMessage = { ok: true; result: ModelRunResult } | { ok: false; code: string; message: string };

/** In the child: run, send the outcome to the parent, exit (a model's stray timers must not keep it). */
async function runAsChild(a: RunArgs): Promise<number> {
  // Loaded here, in the child only: the parent that relays the answer stays light.
  const { runModel } = await import('./model-run.ts');
  let message: ChildMessage;
  try {
    message = { ok: true, result: await runModel(a) };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    message = { ok: false, code: e.code ?? 'INTERNAL', message: e.message ?? String(error) };
  }
  await new Promise<void>((resolve) => process.send!(message, () => resolve()));
  process.exit(message.ok ? 0 : 1);
}

/** In the parent: the child's fd 1 and 2 are our fd 2; its result comes over IPC. */
function runInChild(args: string[]): Promise<ChildMessage> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, 'model', 'run', ...args], {
    stdio: ['ignore', 2, 2, 'ipc'],
    serialization: 'advanced',
    env: { ...process.env, [CHILD_ENV]: '1' },
  });
  let outcome: ChildMessage | undefined;
  child.on('message', (m: ChildMessage) => (outcome = m));
  // A signal to this command (not only to the terminal's process group) stops the run too.
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  child.once('exit', () => process.off('SIGINT', forward).off('SIGTERM', forward));
  return new Promise((resolve) => {
    child.on('error', (e) => resolve({ ok: false, code: 'INTERNAL', message: `cannot start the model run: ${e.message}` }));
    child.on('exit', (code, signal) =>
      resolve(outcome ?? { ok: false, code: 'INTERNAL', message: `the model run ended without an answer (${signal ?? `exit code ${code}`})` }),
    );
  });
}

export async function modelCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub ? process.stdout : process.stderr).write(USAGE);
    return sub ? 0 : 1;
  }
  if (sub !== 'run') {
    process.stderr.write(`tritium model: unknown subcommand '${sub}'\n${USAGE}`);
    return 1;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const child = process.env[CHILD_ENV] === '1' && process.send;
  if (!child && !namesServeFlag(rest)) {
    // Warm: a tritium dev serving the model's repository answers without loading anything here.
    const own = parseRunArgs(rest);
    if (typeof own !== 'string' && !own.cold) {
      const { folder, cold: _cold, verbose, ...request } = own;
      const reply = await askDevServer(folder, request).catch((e: unknown) => ({ ok: false as const, code: 'INTERNAL', message: (e as Error).message, logs: [] }));
      if (reply) return printDevReply(reply, verbose);
    }
  }
  const parsed = await parseArgs(rest);
  if (typeof parsed === 'string') {
    process.stderr.write(`tritium model run: ${parsed}\n${USAGE}`);
    return 1;
  }
  if (child) return runAsChild(parsed);
  const outcome = await runInChild(rest);
  if (!outcome.ok) {
    process.stderr.write(`tritium model run: ${outcome.code}: ${outcome.message}\n`);
    return 1;
  }
  process.stdout.write(`${formatJson(outcome.result)}\n`);
  return 0;
}
