/**
 * `tritium model run <model folder> --input NAME=<json> [--input ...] [--version N] [--output NAME]`:
 * runs a `model.ts` once (initialize + one execute + finalize, in a sandboxed worker, no server) and
 * prints its outputs as JSON, so authors can try a model in seconds.
 */
import { InferError } from '@tritium/core';
import { runModelOnce } from '@tritium/backend-python-like';

const USAGE = `usage: tritium model run <model folder> --input NAME=<json> [--input NAME=<json> ...] [--version N] [--output NAME ...]

  <json> is a nested array (shape inferred; a batching model gets a batch dimension of 1 in front)
  or {"shape": [..], "data": [..]}; the datatype comes from config.pbtxt. Example:
    tritium model run model_repository/tokenizer --input 'TEXT=["I love this movie"]'
`;

interface RunArgs {
  folder: string;
  inputs: Record<string, unknown>;
  outputs: string[];
  version?: number;
}

function parseArgs(args: string[]): RunArgs | string {
  let folder: string | undefined;
  const inputs: Record<string, unknown> = {};
  const outputs: string[] = [];
  let version: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? args[++i];
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
    } else if (flag === '--version' || flag === '-v') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 1) return `--version expects a positive integer`;
      version = v;
    } else if (flag.startsWith('-')) {
      return `unknown option '${flag}'`;
    } else if (folder === undefined) {
      folder = arg;
    } else {
      return `unexpected argument '${arg}'`;
    }
  }
  if (!folder) return 'missing <model folder>';
  return { folder, inputs, outputs, ...(version !== undefined ? { version } : {}) };
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

export async function modelCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(USAGE);
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
  const parsed = parseArgs(rest);
  if (typeof parsed === 'string') {
    process.stderr.write(`tritium model run: ${parsed}\n${USAGE}`);
    return 1;
  }
  try {
    const result = await runModelOnce({
      modelDir: parsed.folder,
      inputs: parsed.inputs,
      outputs: parsed.outputs,
      ...(parsed.version !== undefined ? { version: parsed.version } : {}),
    });
    process.stdout.write(`${formatJson(result)}\n`);
    return 0;
  } catch (error) {
    const e = InferError.from(error);
    process.stderr.write(`tritium model run: ${e.code}: ${e.message}\n`);
    return 1;
  }
}
