/**
 * `isolation: 'process'`: the instance runs in a child process under Node's permission model. It may
 * read its own folder and what it was granted, nothing else; faults still restart it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance } from '../../src/worker/types.ts';
import { TEST_ENTRIES, type TestModelInit } from '../../src/testing/index.ts';
import type { InferRequest, InferResponse } from '../../src/types.ts';

const never = new AbortController().signal;

function req(id: string, fault: string): InferRequest {
  return { id, model: 'p', inputs: [{ name: 'INPUT0', datatype: 'UINT8', shape: [1], data: new Uint8Array([9]) }], parameters: { fault } };
}

describe('worker host: process isolation', () => {
  let inst: WorkerInstance;
  let allowed: string;
  let outside: string;
  beforeAll(async () => {
    allowed = await mkdtemp(join(tmpdir(), 'tritium-allowed-'));
    outside = await mkdtemp(join(tmpdir(), 'tritium-outside-'));
    await writeFile(join(allowed, 'ok.txt'), 'readable');
    await writeFile(join(outside, 'secret.txt'), 'secret');
    inst = await spawnWorkerInstance<TestModelInit>({
      entry: TEST_ENTRIES.fault,
      init: { model: 'p', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
      model: 'p',
      instanceName: 'p_0_0',
      isolation: 'process',
      processPermissions: { allowRead: [allowed] },
      restart: { initialBackoffMs: 5 },
    });
  });
  afterAll(async () => {
    await inst?.dispose();
    await rm(allowed, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('serves requests and may read the folders it was granted', async () => {
    const [echo, read] = (await inst.execute([req('1', 'ok'), req('2', `read:${join(allowed, 'ok.txt')}`)], never)).results;
    expect((echo as InferResponse).outputs[0]!.data).toEqual(new Uint8Array([9]));
    expect(new TextDecoder().decode((read as InferResponse).outputs[0]!.data)).toBe('readable');
  });

  it('cannot read outside its folders: that request fails clearly and the instance survives', async () => {
    const secret = join(outside, 'secret.txt');
    const [denied] = (await inst.execute([req('3', `read:${secret}`)], never)).results;
    expect(InferError.is(denied)).toBe(true);
    expect((denied as InferError).message).toContain(`cannot read '${secret}': ERR_ACCESS_DENIED`);
    expect(inst.healthy).toBe(true);
    expect(inst.restarts).toBe(0);
    const [next] = (await inst.execute([req('4', 'ok')], never)).results;
    expect(InferError.is(next)).toBe(false);
  });

  it('restarts the child process after it exits', async () => {
    await expect(inst.execute([req('5', 'exit')], never)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: "model 'p' instance 'p_0_0' crashed: worker exited with code 3",
    });
    const [next] = (await inst.execute([req('6', 'ok')], never)).results;
    expect(InferError.is(next)).toBe(false);
    expect(inst.restarts).toBe(1);
  });
});
