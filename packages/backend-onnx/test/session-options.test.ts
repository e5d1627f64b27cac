import { describe, expect, it } from 'vitest';
import { type ModelConfig } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { instanceProviders, modelSessionOptions } from '../src/index.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
// Tests generate their models with the workspace's ONNX generator (a tool, not a runtime dependency).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildAddSubModel } from '@tritium/onnx-gen';
import { captureLog, loadModel, TempRepo } from './helpers.ts';

const config = (text: string): ModelConfig =>
  normalizeModelConfig({ ...parseModelConfigText(`backend: "onnxruntime"\n${text}`), name: 'm' }, { modelName: 'm' });
const param = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }\n`;

describe('session options from the config', () => {
  it('splits the cores between instances by default', () => {
    expect(modelSessionOptions(config('instance_group [{ kind: KIND_CPU, count: 3 }]'), 16).session.intraOpNumThreads).toBe(5);
    expect(modelSessionOptions(config('instance_group [{ kind: KIND_CPU, count: 4 }]'), 2).session.intraOpNumThreads).toBe(1);
  });

  it("maps Triton's onnxruntime parameters and graph levels", () => {
    const c = config(
      param('intra_op_thread_count', '3') +
        param('inter_op_thread_count', '2') +
        param('execution_mode', '1') +
        param('enable_mem_arena', '0') +
        param('enable_mem_pattern', 'false') +
        param('memory.enable_memory_arena_shrinkage', 'cpu:0') +
        'optimization { graph { level: 1 } }',
    );
    const { session, run } = modelSessionOptions(c, 8);
    expect(session).toMatchObject({
      intraOpNumThreads: 3,
      interOpNumThreads: 2,
      executionMode: 'parallel',
      enableCpuMemArena: false,
      enableMemPattern: false,
      graphOptimizationLevel: 'extended',
    });
    expect(run.extra).toEqual({ memory: { enable_memory_arena_shrinkage: 'cpu:0' } });
    // Spinning is off by default; `session.*` parameters pass through as session config entries.
    expect(session.extra).toEqual({ session: { intra_op: { allow_spinning: '0' } } });
    const spin = modelSessionOptions(config(param('session.intra_op.allow_spinning', '1') + param('session.use_device_allocator_for_initializers', '1')), 2);
    expect(spin.session.extra).toEqual({ session: { intra_op: { allow_spinning: '1' }, use_device_allocator_for_initializers: '1' } });
    const level = (l: number) => modelSessionOptions(config(`optimization { graph { level: ${l} } }`), 2).session.graphOptimizationLevel;
    expect([level(-1), level(0), level(1), level(2)]).toEqual(['basic', 'all', 'extended', 'disabled']);
  });

  it('refuses malformed parameter values naming the model and key', () => {
    expect(() => modelSessionOptions(config(param('intra_op_thread_count', 'lots')))).toThrow("model 'm': parameter 'intra_op_thread_count' must be an integer, got 'lots'");
    expect(() => modelSessionOptions(config(param('execution_mode', '3')))).toThrow(/execution_mode' must be 0 \(sequential\) or 1 \(parallel\)/);
    expect(() => modelSessionOptions(config(param('enable_mem_arena', 'maybe')))).toThrow(/must be a boolean, got 'maybe'/);
  });
});

describe('thread pools are bounded', () => {
  for (const key of ['intra_op_thread_count', 'inter_op_thread_count']) {
    it(`${key} 100000 is refused naming the bound (ORT started that many OS threads per instance)`, () => {
      expect(() => modelSessionOptions(config(param(key, '100000')), 2)).toThrow(`model 'm': parameter '${key}' must be at most 1024, got 100000`);
      expect(modelSessionOptions(config(param(key, '1024')), 2).session).toBeDefined();
    });
  }
});

describe('session config keys cannot reach a prototype', () => {
  for (const key of ['session.__proto__.polluted', 'session.constructor.prototype.polluted', 'session.x.__proto__']) {
    it(`'${key}' is refused naming it, and no object gains a property (it set one on every object of the server's main thread)`, () => {
      expect(() => modelSessionOptions(config(param(key, 'yes')), 2)).toThrow(`model 'm': parameter '${key}' is not an ONNX Runtime session config key`);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    });
  }

  it('a key that names an inherited property is not a known key (toString)', () => {
    expect(() => modelSessionOptions(config(param('session.toString.x', '1')), 2)).toThrow(
      "model 'm': parameter 'session.toString.x' is not an ONNX Runtime session config key this server passes on",
    );
  });
});

describe('session config keys that make ONNX Runtime touch files', () => {
  for (const key of ['session.collect_node_memory_stats_to_file', 'session.debug_layout_transformation', 'session.node_partition_config_file', 'session.model_external_initializers_file_folder_path']) {
    it(`'${key}' is refused naming it`, () => {
      expect(() => modelSessionOptions(config(param(key, '/tmp/x')), 2)).toThrow(
        `model 'm': parameter '${key}' is refused: it makes ONNX Runtime write or read files outside the model`,
      );
    });
  }

  it('an unknown session key is refused naming it; known ones still pass', () => {
    expect(() => modelSessionOptions(config(param('session.some_future_key', '1')), 2)).toThrow(
      /parameter 'session.some_future_key' is not an ONNX Runtime session config key this server passes on \(known: session.disable_prepacking, /,
    );
    const { session } = modelSessionOptions(config(param('session.disable_prepacking', '1') + param('session.intra_op_thread_affinities', '1;2')), 2);
    expect(session.extra).toMatchObject({ session: { disable_prepacking: '1', intra_op_thread_affinities: '1;2' } });
  });

  it('a real load with session.collect_node_memory_stats_to_file fails and writes nothing (ORT created the named file on the first run)', async () => {
    const repo = await TempRepo.create();
    const target = join(repo.root, 'written-by-ort.csv');
    try {
      await expect(
        loadModel(repo, 'stats', buildAddSubModel(), param('session.collect_node_memory_stats_to_file', target) + param('enable_mem_pattern', '0')),
      ).rejects.toThrow("parameter 'session.collect_node_memory_stats_to_file' is refused");
      expect(existsSync(target)).toBe(false);
    } finally {
      await repo.dispose();
    }
  });
});

describe('execution providers', () => {
  const noGpu = { cuda: false, tensorrt: false, reason: 'no NVIDIA driver or device is present' };
  const gpu = { cuda: true, tensorrt: true, reason: '' };
  const instance = { name: 'm_0', kind: 'GPU' as const, device: 1 };

  it('CPU instances use the CPU provider', () => {
    expect(instanceProviders(config(''), { ...instance, kind: 'CPU' }, captureLog(), false, gpu).executionProviders).toEqual(['cpu']);
  });

  it('KIND_GPU uses CUDA (TensorRT first when asked) on a host with a usable GPU', () => {
    const trt = config('optimization { execution_accelerators { gpu_execution_accelerator [{ name: "tensorrt" }] } }');
    expect(instanceProviders(trt, instance, captureLog(), false, gpu).executionProviders).toEqual([
      { name: 'tensorrt', deviceId: 1 },
      { name: 'cuda', deviceId: 1 },
      'cpu',
    ]);
  });

  it('KIND_GPU without a GPU: CPU with a warning, or a clear refusal when strict', () => {
    const log = captureLog();
    expect(instanceProviders(config(''), instance, log, false, noGpu).executionProviders).toEqual(['cpu']);
    expect(log.lines).toEqual([
      "W model 'm' instance 'm_0': KIND_GPU requested but no NVIDIA driver or device is present; falling back to the CPU execution provider",
    ]);
    expect(() => instanceProviders(config(''), instance, captureLog(), true, noGpu)).toThrow(
      "model 'm' instance 'm_0' needs a GPU (KIND_GPU) but no NVIDIA driver or device is present; refusing to fall back to CPU because the server runs with strict GPU placement",
    );
  });

  it('unknown accelerators fail with Triton\'s message', () => {
    const c = config('optimization { execution_accelerators { gpu_execution_accelerator [{ name: "warp" }] } }');
    expect(() => instanceProviders(c, instance, captureLog(), false, gpu)).toThrow("unknown Execution Accelerator 'warp' is requested");
  });
});
