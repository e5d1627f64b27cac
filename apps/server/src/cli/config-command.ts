/**
 * `tritium config <model folder | config.pbtxt>`: parse, normalize and validate one config the way
 * the server would load it, and print it as Triton's JSON (what `GET /v2/models/<m>/config`
 * returns). On any problem print `file:line:column: message` and exit 1. No server, no backends.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  InferError,
  configSourcePosition,
  modelConfigToJson,
  normalizeModelConfig,
  parseModelConfigText,
  validateModelConfig,
} from '@tritium/core';
import type { ModelConfig, VersionDirEntry } from '@tritium/core';

export interface ConfigCommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const USAGE = `usage: tritium config <model folder | config.pbtxt>

Prints the config normalized with Triton's defaults, as Triton's JSON, or
file:line:column: message (exit 1). For a model folder, its name is the model name.
`;

/** Entries of the lowest numeric version folder, for backend auto-complete (model.onnx, model.ts, ...). */
function firstVersionEntries(modelDir: string): VersionDirEntry[] | undefined {
  const versions = readdirSync(modelDir)
    .filter((f) => /^[1-9][0-9]*$/.test(f) && statSync(path.join(modelDir, f)).isDirectory())
    .sort((a, b) => Number(a) - Number(b));
  if (versions.length === 0) return undefined;
  const dir = path.join(modelDir, versions[0]!);
  return readdirSync(dir).map((name) => ({ name, isDirectory: statSync(path.join(dir, name)).isDirectory() }));
}

function located(file: string, parsed: ModelConfig | undefined, error: InferError): string {
  const fieldPath = (error as { fieldPath?: unknown }).fieldPath;
  const at = parsed && typeof fieldPath === 'string' ? configSourcePosition(parsed, fieldPath) : undefined;
  return `${file}:${at?.line ?? 1}:${at?.column ?? 1}: ${error.message}`;
}

export async function configCommand(args: string[], io: ConfigCommandIo = process): Promise<number> {
  if (args.length !== 1 || args[0] === '--help' || args[0] === '-h') {
    (args[0] === '--help' || args[0] === '-h' ? io.stdout : io.stderr).write(USAGE);
    return args.length === 1 ? 0 : 1;
  }
  const target = args[0]!;
  if (!existsSync(target)) {
    io.stderr.write(`${target}:1:1: no such file or folder\n`);
    return 1;
  }
  const isModelDir = statSync(target).isDirectory();
  const file = isModelDir ? path.join(target, 'config.pbtxt') : target;
  const modelName = isModelDir ? path.basename(path.resolve(target)) : undefined;

  let parsed: ModelConfig | undefined;
  try {
    // Triton lets a model folder omit config.pbtxt when its backend can complete the config.
    const text = existsSync(file) || !isModelDir ? readFileSync(file, 'utf8') : '';
    parsed = parseModelConfigText(text, { file });
    const normalized = normalizeModelConfig(parsed, {
      modelName,
      firstVersionEntries: isModelDir ? firstVersionEntries(target) : undefined,
    });
    validateModelConfig(normalized, { directoryName: modelName });
    io.stdout.write(`${modelConfigToJson(normalized, { indent: 2 })}\n`);
    return 0;
  } catch (e) {
    if (e instanceof ConfigError) io.stderr.write(`${e.message}\n`);
    else if (InferError.is(e)) io.stderr.write(`${located(file, parsed, e)}\n`);
    else io.stderr.write(`${file}:1:1: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
