/**
 * BLS call chains through a real server and real model.ts workers: a call that
 * could only wait on instances its own callers hold is refused at once naming the chain, and
 * cancelling a client request cancels the BLS calls below it (through ensembles too), so the
 * instances come free and the server stops without waiting out its exit timeout. The relay
 * fixtures forward a request along its `route` parameter (fixtures/relay_a/1/model.ts).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferenceServer, type InferRequest } from '@tritium/core';
import { captureLog } from '@tritium/core/testing';
import { pythonLikeBackend } from '../src/index.ts';
import { FIXTURES, asInt32, int32 } from './helpers.ts';

const MODELS = ['relay_a', 'relay_b', 'relay_c', 'relay_ens'];

async function startServer(log = captureLog()) {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-bls-chains-'));
  for (const name of MODELS) cpSync(path.join(FIXTURES, name), path.join(repo, name), { recursive: true });
  const server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()], log });
  await server.start();
  return { repo, server, log };
}

const relay = (route: string, extra: Partial<InferRequest> & { wait?: string } = {}): InferRequest => {
  const { wait, ...rest } = extra;
  return { id: `via-${route || 'none'}`, model: 'relay_a', inputs: [int32('IN', [1, 2, 3], [1, 3])], parameters: { route, ...(wait ? { wait } : {}) }, ...rest };
};

describe('BLS cycles', () => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    ctx = await startServer();
  });
  afterAll(async () => {
    await ctx?.server.stop();
    if (ctx) rmSync(ctx.repo, { recursive: true, force: true });
  });

  it('A -> B -> A with one instance each is refused at once, naming the chain', async () => {
    await expect(ctx.server.infer(relay('relay_b,relay_a'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining("BLS call cycle: relay_a -> relay_b -> relay_a: all 1 instance(s) of model 'relay_a' are held"),
    });
    // Nothing is left waiting, and both models serve again.
    expect(ctx.server.metrics().every((m) => m.pendingRequests === 0)).toBe(true);
    expect(asInt32((await ctx.server.infer(relay('relay_b'))).outputs[0])).toEqual([1, 2, 3]);
  });

  it('a model calling itself with its only instance is refused; with two instances the call runs on the other', async () => {
    await expect(ctx.server.infer(relay('relay_a'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('BLS call cycle: relay_a -> relay_a:'),
    });
    const twice = { ...relay('relay_c'), model: 'relay_c' };
    expect(asInt32((await ctx.server.infer(twice)).outputs[0])).toEqual([1, 2, 3]);
    // A third level would need a third instance.
    await expect(ctx.server.infer({ ...relay('relay_c,relay_c'), model: 'relay_c' })).rejects.toMatchObject({
      message: expect.stringContaining("BLS call cycle: relay_c -> relay_c -> relay_c: all 2 instance(s) of model 'relay_c'"),
    });
  });

  it('a cycle through an ensemble names the chain too', async () => {
    await expect(ctx.server.infer({ ...relay('relay_ens'), model: 'relay_b' })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining("BLS call cycle: relay_b -> relay_ens -> relay_b: all 1 instance(s) of model 'relay_b'"),
    });
  });
});

describe('cancellation through BLS chains', () => {
  for (const route of ['relay_b', 'relay_ens']) {
    it(`cancelling the client cancels the calls below it (relay_a -> ${route}), frees the instances, and the server stops without its exit timeout`, async () => {
      const ctx = await startServer();
      try {
        const client = new AbortController();
        const pending = ctx.server.infer(relay(route, { wait: 'cancel', signal: client.signal }));
        // relay_b runs, waiting on a cancellation that only the chain can deliver.
        await vi.waitFor(() => expect(ctx.log.lines.some((l) => l.includes('relay waits for the cancellation'))).toBe(true), { timeout: 30_000 });
        client.abort();
        await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
        await vi.waitFor(() => expect(ctx.log.lines.some((l) => l.includes('relay saw the cancellation'))).toBe(true), { timeout: 30_000 });
        // The instances came free: the same chain serves again, and nothing is pending.
        expect(asInt32((await ctx.server.infer(relay(route))).outputs[0])).toEqual([1, 2, 3]);
        expect(ctx.server.metrics().every((m) => m.pendingRequests === 0)).toBe(true);
        await ctx.server.stop({ timeoutMs: 20_000 });
        expect(ctx.log.lines.filter((l) => l.includes('still busy'))).toEqual([]);
      } finally {
        await ctx.server.stop();
        rmSync(ctx.repo, { recursive: true, force: true });
      }
    });
  }
});
