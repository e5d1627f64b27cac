/**
 * The batcher over real worker instances of the `fault` test backend: a crash fails only its batch;
 * a batch whose execute rejects is bisected down to the request that causes it (a crashed batch's
 * requests are re-run alone: crash-retry.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { faultBackend } from '../../src/testing/index.ts';
import { config, dynamicBatching, req, settle, valueOf } from './helpers.ts';

describe('dynamic batcher over crashing worker instances', () => {
  it('an exiting worker fails only the requests of its batch; the next batches succeed', async () => {
    const cfg = config({ name: 'f', backend: 'fault', max_batch_size: 4, dynamic_batching: dynamicBatching() });
    const model = await faultBackend({ restart: { maxRestarts: 5, windowMs: 60_000, initialBackoffMs: 10, maxBackoffMs: 50 } }).loadModel({
      config: cfg,
      version: 1,
      modelDir: '/nonexistent',
      versionDir: '/nonexistent/1',
      log: silentLogger,
    });
    const a = await model.createInstance({ name: 'f_0_0', kind: 'CPU', device: 0, groupName: 'f' });
    const b = await model.createInstance({ name: 'f_0_1', kind: 'CPU', device: 0, groupName: 'f' });
    try {
      const s = createScheduler(cfg, { modelName: 'f', version: 1, instances: [a, b], infer: () => Promise.reject(new Error('unused')) });
      // Alone in its batch (sent at once to an idle instance), the crashing request takes nobody with it.
      const crash = settle(s.enqueue(req(0, { model: 'f', parameters: { fault: 'exit' } })));
      const fine = await Promise.all([1, 2, 3].map((v) => s.enqueue(req(v, { model: 'f' }))));
      expect(fine.map(valueOf)).toEqual([1, 2, 3]);
      for (let i = 0; i < 100 && !crash.done; i++) await new Promise((r) => setTimeout(r, 20));
      expect(crash.error?.code).toBe('INTERNAL');
      expect(crash.error?.message).toMatch(/crashed/);
      // The crashed instance restarts; both keep serving.
      const after = await Promise.all(Array.from({ length: 8 }, (_, i) => s.enqueue(req(10 + i, { model: 'f' }))));
      expect(after.map(valueOf)).toEqual(Array.from({ length: 8 }, (_, i) => 10 + i));
      await s.stop();
    } finally {
      await a.dispose();
      await b.dispose();
      await model.dispose();
    }
  });

  describe('poison isolation over a real worker', () => {
    async function oneInstance() {
      const cfg = config({ name: 'f', backend: 'fault', max_batch_size: 8, dynamic_batching: dynamicBatching() });
      const model = await faultBackend({ restart: { maxRestarts: 5, windowMs: 60_000, initialBackoffMs: 10, maxBackoffMs: 50 } }).loadModel({
        config: cfg,
        version: 1,
        modelDir: '/nonexistent',
        versionDir: '/nonexistent/1',
        log: silentLogger,
      });
      const instance = await model.createInstance({ name: 'f_0_0', kind: 'CPU', device: 0, groupName: 'f' });
      const s = createScheduler(cfg, { modelName: 'f', version: 1, instances: [instance], infer: () => Promise.reject(new Error('unused')) });
      /** Four requests queued behind a busy instance, so they run as one batch; `bad` is the fault of the second. */
      const batchOfFour = async (bad: string) => {
        const busy = s.enqueue(req(-1, { model: 'f', parameters: { fault: 'delay:200' } }));
        const four = [0, 1, 2, 3].map((v) => settle(s.enqueue(req(v, { model: 'f', parameters: { fault: v === 1 ? bad : 'ok' } }))));
        await busy;
        for (let i = 0; i < 500 && four.some((r) => !r.done); i++) await new Promise((r) => setTimeout(r, 20));
        return four;
      };
      return {
        instance,
        batchOfFour,
        async dispose() {
          await s.stop();
          await instance.dispose();
          await model.dispose();
        },
      };
    }

    it('a rejecting execute is bisected: only the request that causes it fails', async () => {
      const m = await oneInstance();
      try {
        const four = await m.batchOfFour('reject');
        expect(four.map((r) => r.error?.message ?? valueOf(r.value!))).toEqual([0, 'fault backend: execute rejected on purpose', 2, 3]);
      } finally {
        await m.dispose();
      }
    });
  });
});
