/**
 * `node tools/onnx-gen/dist/cli.js <kind> <out.onnx> [--key=value ...]`
 *
 * Kinds: add-sub, no-batch, identity, sequence, scalar, bert, loop. Options are the builder's option
 * names (`--dtype=FP32 --vocab-size=30522 --hidden=128 --layers=2 --heads=2 --seed=7`), kebab- or
 * camel-case; numbers are parsed as numbers.
 */
import { buildAddSubModel, buildNoBatchModel, buildIdentityModel, buildSequenceModel, buildScalarModel } from './op-models.ts';
import { buildBertModel, type BertOptions } from './bert.ts';
import { buildLoopModel } from './loop-model.ts';
import { pathToFileURL } from 'node:url';
import { writeModel } from './write.ts';
import type { ElementType } from './dtypes.ts';

const USAGE = 'usage: cli.ts <add-sub|no-batch|identity|sequence|scalar|bert|loop> <out.onnx> [--option=value ...]';

/** Parses `--some-key=value` into `{ someKey: value }` (numeric strings become numbers). */
export function parseOptions(args: readonly string[]): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const arg of args) {
    const m = /^--([A-Za-z][\w-]*)=(.*)$/.exec(arg);
    if (!m) throw new Error(`bad option '${arg}' (expected --key=value)\n${USAGE}`);
    const key = m[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const raw = m[2]!;
    out[key] = raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return out;
}

/**
 * The options each kind takes on the command line (camelCase, as parsed). Array- and
 * callback-valued builder options (shapes, name pairs, overrides) have no command-line form.
 */
export const CLI_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  'add-sub': ['dtype', 'outputDtype'],
  'no-batch': ['dtype'],
  identity: ['dtype'],
  sequence: [],
  scalar: ['dtype'],
  loop: ['iterations'],
  bert: [
    'vocabSize', 'hidden', 'layers', 'heads', 'intermediate', 'maxPosition', 'numLabels', 'typeVocabSize', 'seed', 'initStd', 'pooling',
    'inputIds', 'attentionMask', 'logits', 'tokenEmbeddings',
  ],
};

const kebab = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Builds the model `kind` with `options`; an option the kind does not take is refused, naming the valid ones. */
export function buildByKind(kind: string, options: Record<string, string | number>): Uint8Array {
  const valid = Object.hasOwn(CLI_OPTIONS, kind) ? CLI_OPTIONS[kind] : undefined;
  if (!valid) throw new Error(`unknown model kind '${kind}'\n${USAGE}`);
  for (const key of Object.keys(options)) {
    if (!valid.includes(key)) {
      const list = valid.length > 0 ? `valid options for '${kind}': ${valid.map(kebab).join(', ')}` : `'${kind}' takes no options`;
      throw new Error(`unknown option '${kebab(key)}' for '${kind}'; ${list}`);
    }
  }
  const dtype = options['dtype'] as ElementType | undefined;
  switch (kind) {
    case 'add-sub':
      return buildAddSubModel({ ...(dtype ? { dtype } : {}), ...(options['outputDtype'] ? { outputDtype: options['outputDtype'] as ElementType } : {}) });
    case 'no-batch':
      return buildNoBatchModel(dtype ? { dtype } : {});
    case 'identity':
      return buildIdentityModel({ dtype: dtype ?? 'FP32' });
    case 'sequence':
      return buildSequenceModel();
    case 'scalar':
      return buildScalarModel(dtype ? { dtype } : {});
    case 'loop':
      return buildLoopModel(options['iterations'] !== undefined ? { iterations: BigInt(options['iterations']) } : {});
    case 'bert': {
      const { inputIds, attentionMask, logits, tokenEmbeddings, ...rest } = options;
      const names = {
        ...(inputIds ? { inputIds: String(inputIds) } : {}),
        ...(attentionMask ? { attentionMask: String(attentionMask) } : {}),
        ...(logits ? { logits: String(logits) } : {}),
        ...(tokenEmbeddings ? { tokenEmbeddings: String(tokenEmbeddings) } : {}),
      };
      return buildBertModel({ vocabSize: 30522, hidden: 128, layers: 2, heads: 2, ...rest, names } as BertOptions);
    }
    default:
      throw new Error(`unknown model kind '${kind}'\n${USAGE}`);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const [kind, out, ...rest] = argv;
  if (!kind || !out) throw new Error(USAGE);
  const bytes = buildByKind(kind, parseOptions(rest));
  await writeModel(out, bytes);
  console.log(`wrote ${out} (${bytes.byteLength} bytes)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  });
}
