/**
 * gpu-check step 3: writes the ONNX model the engine is built from: Triton's `simple` add/sub in
 * FP32 over [batch, 16] (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1).
 *
 *   node tools/gpu-check/dist/gen-onnx.js <out.onnx>
 */
import { writeFileSync } from 'node:fs';
import { buildAddSubModel } from '@tritium/onnx-gen';

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: gen-onnx.ts <out.onnx>\n');
  process.exit(2);
}
const bytes = buildAddSubModel({ dtype: 'FP32', shape: ['batch', 16] });
writeFileSync(out, bytes);
process.stdout.write(`wrote ${out} (${bytes.byteLength} bytes): add/sub FP32, INPUT0/INPUT1 [batch,16] -> OUTPUT0/OUTPUT1\n`);
