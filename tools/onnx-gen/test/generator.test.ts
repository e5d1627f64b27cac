import { describe, expect, it } from 'vitest';
import * as ort from 'onnxruntime-node';
import { buildAddSubModel, buildBertModel, buildIdentityModel, buildSequenceModel, onnx } from '../src/index.ts';
import { buildByKind, parseOptions } from '../src/cli.ts';

const SMALL_BERT = { vocabSize: 100, hidden: 16, layers: 2, heads: 2, maxPosition: 32, seed: 7 } as const;

describe('onnx-gen', () => {
  it('gives identical bytes for identical options, different bytes for another seed', () => {
    const a = buildBertModel(SMALL_BERT);
    const b = buildBertModel(SMALL_BERT);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const c = buildBertModel({ ...SMALL_BERT, seed: 8 });
    expect(Buffer.from(a).equals(Buffer.from(c))).toBe(false);
    expect(Buffer.from(buildAddSubModel()).equals(Buffer.from(buildAddSubModel()))).toBe(true);
  });

  it('writes symbolic batch dims and named graph I/O', () => {
    const model = onnx.ModelProto.decode(buildSequenceModel());
    const input = model.graph!.input![0]!;
    expect(input.name).toBe('input_ids');
    expect(input.type!.tensorType!.shape!.dim!.map((d) => d.dimParam)).toEqual(['batch', 'sequence']);
    expect(String(model.opsetImport![0]!.version)).toBe('17');
  });

  it('builds add/sub that onnxruntime runs', async () => {
    const session = await ort.InferenceSession.create(buildAddSubModel({ dtype: 'FP32' }));
    const x = Float32Array.from({ length: 32 }, (_, i) => i);
    const y = new Float32Array(32).fill(0.5);
    const out = await session.run({ INPUT0: new ort.Tensor('float32', x, [2, 16]), INPUT1: new ort.Tensor('float32', y, [2, 16]) });
    expect(Array.from(out['OUTPUT0']!.data as Float32Array).slice(0, 3)).toEqual([0.5, 1.5, 2.5]);
    expect(Array.from(out['OUTPUT1']!.data as Float32Array).slice(30)).toEqual([29.5, 30.5]);
    await session.release();
  });

  it('builds a BERT encoder that honours the attention mask and the token-score path', async () => {
    const scores = new Float32Array(SMALL_BERT.vocabSize);
    scores[5] = 1; // "positive" token
    scores[6] = -1; // "negative" token
    const bytes = buildBertModel({ ...SMALL_BERT, pooling: 'mean', overrides: { tokenScores: { scores, weights: [-4, 4] } } });
    const session = await ort.InferenceSession.create(bytes);
    const run = async (ids: number[], mask: number[]) => {
      const t = (v: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [1, v.length]);
      const out = await session.run({ input_ids: t(ids), attention_mask: t(mask) });
      return Array.from(out['logits']!.data as Float32Array);
    };
    const pos = await run([1, 5, 2], [1, 1, 1]);
    const neg = await run([1, 6, 2], [1, 1, 1]);
    expect(pos[1]! - pos[0]!).toBeGreaterThan(0);
    expect(neg[0]! - neg[1]!).toBeGreaterThan(0);
    // Padding behind the mask changes nothing; the same tokens unmasked do.
    const padded = await run([1, 5, 2, 6, 6], [1, 1, 1, 0, 0]);
    padded.forEach((v, i) => expect(v).toBeCloseTo(pos[i]!, 4));
    const unmasked = await run([1, 5, 2, 6, 6], [1, 1, 1, 1, 1]);
    expect(Math.abs(unmasked[0]! - pos[0]!)).toBeGreaterThan(1e-3);
    await session.release();
  });

  it("outputs the token embeddings with pooling 'none', padding leaving the unmasked rows unchanged", async () => {
    const bytes = buildBertModel({ ...SMALL_BERT, pooling: 'none', names: { tokenEmbeddings: 'TOKEN_EMBEDDINGS' } });
    const session = await ort.InferenceSession.create(bytes);
    expect(session.outputNames).toEqual(['TOKEN_EMBEDDINGS']);
    const t = (v: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [1, v.length]);
    const plain = await session.run({ input_ids: t([1, 5, 2]), attention_mask: t([1, 1, 1]) });
    const padded = await session.run({ input_ids: t([1, 5, 2, 0, 0]), attention_mask: t([1, 1, 1, 0, 0]) });
    expect(plain['TOKEN_EMBEDDINGS']!.dims).toEqual([1, 3, SMALL_BERT.hidden]);
    expect(padded['TOKEN_EMBEDDINGS']!.dims).toEqual([1, 5, SMALL_BERT.hidden]);
    const a = plain['TOKEN_EMBEDDINGS']!.data as Float32Array;
    const b = (padded['TOKEN_EMBEDDINGS']!.data as Float32Array).subarray(0, a.length);
    a.forEach((v, i) => expect(b[i]).toBeCloseTo(v, 4));
    await session.release();
  });

  it('builds identity models for FP16, BOOL and BYTES', async () => {
    for (const dtype of ['FP16', 'BOOL', 'BYTES'] as const) {
      const session = await ort.InferenceSession.create(buildIdentityModel({ dtype }));
      expect(session.outputNames).toEqual(['OUTPUT0']);
      await session.release();
    }
  });

  it('parses CLI options and rejects unknown kinds', () => {
    expect(parseOptions(['--vocab-size=50', '--input-ids=INPUT_IDS'])).toEqual({ vocabSize: 50, inputIds: 'INPUT_IDS' });
    expect(() => buildByKind('nope', {})).toThrow(/unknown model kind 'nope'/);
    expect(() => buildByKind('constructor', { seed: 1 })).toThrow(/unknown model kind 'constructor'/);
    expect(() => parseOptions(['vocab'])).toThrow(/bad option/);
    // An option the kind does not take is refused, with the valid ones listed.
    expect(() => buildByKind('bert', { vocabSize: 50, hiden: 64 })).toThrow(
      "unknown option '--hiden' for 'bert'; valid options for 'bert': --vocab-size, --hidden, --layers, --heads, --intermediate, --max-position, --num-labels, --type-vocab-size, --seed, --init-std, --pooling, --input-ids, --attention-mask, --logits, --token-embeddings",
    );
    expect(() => buildByKind('add-sub', { vocabSize: 50 })).toThrow("unknown option '--vocab-size' for 'add-sub'; valid options for 'add-sub': --dtype, --output-dtype");
    expect(() => buildByKind('sequence', { dtype: 'FP32' })).toThrow("unknown option '--dtype' for 'sequence'; 'sequence' takes no options");
    expect(buildByKind('sequence', {}).byteLength).toBeGreaterThan(0);
  });
});
