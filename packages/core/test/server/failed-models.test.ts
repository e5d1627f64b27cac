/**
 * What a user sees of models that could not load: inference answers UNAVAILABLE with the reason
 * (not "not found"), and the startup log ends with Triton's model table (Model / Version / Status).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog, identityBackend, type CapturedLog } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { formatTable } from '../../src/server/table-printer.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const WARMUP_FAILS = 'model_warmup [ { name: "w" batch_size: 1 inputs { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]';

describe('models that failed to load', () => {
  let repo: string;
  let server: InferenceServer;
  let log: CapturedLog;
  beforeAll(async () => {
    repo = await makeRepo({
      good: { config: identityConfig('good') },
      typo: { config: identityConfig('typo').replace('"identity"', '"identiti"') },
      warm: { config: identityConfig('warm', { extra: WARMUP_FAILS }) },
    });
    log = captureLog();
    server = new InferenceServer({ repositories: [repo], backends: [identityBackend()], exitOnError: false, log });
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
    await removeRepo(repo);
  });

  const infer = (model: string, version?: number) =>
    server.infer({ id: '1', model, ...(version ? { version } : {}), inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array(4))] }).then(
      () => undefined,
      (e: unknown) => e as InferError,
    );

  it('answers UNAVAILABLE naming why, for a config that failed and for a version that failed to load', async () => {
    const typo = await infer('typo');
    expect([typo?.code, typo?.message]).toEqual(['UNAVAILABLE', "model 'typo' is unavailable: unable to find backend library for backend 'identiti', try specifying runtime on the model configuration."]);
    const warm = await infer('warm');
    expect(warm?.code).toBe('UNAVAILABLE');
    expect(warm?.message).toMatch(/^model 'warm' version 1 is unavailable: failed to run warmup sample 'w': /);
    const warmV1 = await infer('warm', 1);
    expect([warmV1?.code, warmV1?.message]).toEqual(['UNAVAILABLE', warm?.message]);
    // Metadata and readiness say the same.
    expect(() => server.modelMetadata('typo')).toThrow("model 'typo' is unavailable");
    expect(server.modelReady('warm')).toBe(false);
    // Names that exist nowhere keep Triton's answer.
    const none = await infer('nothere');
    expect([none?.code, none?.message]).toEqual(['NOT_FOUND', "Request for unknown model: 'nothere' is not found"]);
    expect(await infer('good')).toBeUndefined();
  });

  it("logs Triton's model table once the startup models are loaded", () => {
    const table = log.lines.find((l) => l.startsWith('I \n+-'));
    expect(table).toBeDefined();
    const rows = table!.split('\n').filter((l) => l.startsWith('| '));
    expect(rows[0]).toMatch(/^\| Model +\| Version \| Status +\|$/);
    expect(rows[1]).toMatch(/^\| good +\| 1 +\| READY +\|$/);
    expect(rows[2]).toMatch(/^\| typo +\| - +\| UNAVAILABLE: unable to find backend library for backend 'identiti', try specifying runtime on the model configuration\. +\|$/);
    expect(rows[3]).toMatch(/^\| warm +\| 1 +\| UNAVAILABLE: failed to run warmup sample 'w': /);
    // After the failure lines, as Triton prints it.
    expect(log.lines.indexOf(table!)).toBeGreaterThan(log.lines.findIndex((l) => l.startsWith('E ') && l.includes("'warm'")));
  });
});

describe("Triton's table printer", () => {
  it('pads columns to the widest cell, with dividers above and below the header and at the end', () => {
    expect(formatTable(['Model', 'Version', 'Status'], [['simple', '1', 'READY'], ['a_longer_name', '12', 'UNAVAILABLE: x']])).toBe(
      [
        '',
        '+---------------+---------+----------------+',
        '| Model         | Version | Status         |',
        '+---------------+---------+----------------+',
        '| simple        | 1       | READY          |',
        '| a_longer_name | 12      | UNAVAILABLE: x |',
        '+---------------+---------+----------------+',
        '',
      ].join('\n'),
    );
  });

  it('wraps a cell longer than its share of the width, and starts a line at each newline', () => {
    const table = formatTable(['A', 'B'], [['x', 'abcdefghij\nkl']], 14);
    // 14 columns: 14 - (2*2 + 3) = 7 usable, 3 each (Triton drops the remainder); A needs 1 and
    // hands its 2 spare to B, which gets 5.
    expect(table).toBe(['', '+---+-------+', '| A | B     |', '+---+-------+', '| x | abcde |', '|   | fghij |', '|   | kl    |', '+---+-------+', ''].join('\n'));
  });
});
