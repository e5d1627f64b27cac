import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_REPOSITORY } from './setup.ts';

/**
 * Copies the example repository (after `setupExample`) to `dest`, optionally with
 * bert_classifier's `KIND_GPU` instance group rewritten to `KIND_CPU`: what the seed's config
 * means on a host without a GPU. `dest` should sit inside the workspace so the copied model.ts
 * files still resolve their npm imports from its node_modules.
 */
export function copyExampleRepository(dest: string, options: { cpuOnly?: boolean; models?: readonly string[] } = {}): string {
  const out = resolve(dest);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const models = options.models ?? ['tokenizer', 'bert_classifier', 'sentiment_ensemble', 'softmax', 'sentiment_ensemble_softmax'];
  for (const m of models) cpSync(join(DEFAULT_REPOSITORY, m), join(out, m), { recursive: true });
  if (options.cpuOnly && models.includes('bert_classifier')) {
    const file = join(out, 'bert_classifier', 'config.pbtxt');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/kind: KIND_GPU\n\s*gpus: \[ 0 \][^\n]*/, 'kind: KIND_CPU'));
  }
  return out;
}
