import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The frames of an error's stack that lie in the model's own folder (source-mapped to `model.ts`
 * lines), as `  /abs/model.ts:12:11 (execute)` lines; empty when none.
 */
export function modelFrames(error: unknown, modelDir: string, max = 5): string[] {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const out: string[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const m = /^\s*at (?:(.*?) \()?(.*?):(\d+):(\d+)\)?$/.exec(line);
    if (!m) continue;
    let file = m[2]!;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    if (!file.startsWith(modelDir + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    out.push(`  ${file}:${m[3]}:${m[4]}${m[1] ? ` (${m[1]})` : ''}`);
    if (out.length >= max) break;
  }
  return out;
}

/** `Error: boom` plus the model frames, in the shape of Triton's python stub messages (`At:` block). */
export function describeError(error: unknown, modelDir: string): string {
  const head = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const frames = modelFrames(error, modelDir);
  return frames.length > 0 ? `${head}\n\nAt:\n${frames.join('\n')}` : head;
}
