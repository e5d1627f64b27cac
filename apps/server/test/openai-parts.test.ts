/** The OpenAI routes' parts on their own: token-id padding bounds, API keys, the flags. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferError } from '@tritium/core';
import { FlagError, parseServeFlags } from '../src/cli/flags.ts';
import { ApiKeys } from '../src/openai/api-keys.ts';
import { OpenAiError, openAiErrorReply } from '../src/openai/errors.ts';
import { paddedTokens, tokenBatches } from '../src/openai/token-batches.ts';

describe('token-id batches', () => {
  it('pads a batch to at most twice its tokens, however the lengths mix', () => {
    const rows = [new Array<number>(8192).fill(7), ...Array.from({ length: 2047 }, () => [1])];
    const batches = tokenBatches(rows, 256);
    const tokens = rows.reduce((n, r) => n + r.length, 0);
    const padded = batches.reduce((n, b) => n + b.rows.length * b.length, 0);
    expect(padded).toBeLessThanOrEqual(2 * tokens + 64 * batches.length);
    expect(padded).toBeLessThan(3 * tokens);
    // Every row once, in some batch of at most 256 rows.
    expect(batches.flatMap((b) => b.rows).sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
    expect(Math.max(...batches.map((b) => b.rows.length))).toBeLessThanOrEqual(256);
  });

  it('keeps rows of one length together, up to the batch size', () => {
    const rows = Array.from({ length: 10 }, () => [1, 2, 3]);
    expect(tokenBatches(rows, 4).map((b) => b.rows.length)).toEqual([4, 4, 2]);
    expect(tokenBatches(rows, 1)).toHaveLength(10);
  });

  it('pads with id 0 behind a mask of 0', () => {
    const rows = [[5, 6, 7], [8]];
    const [batch] = tokenBatches(rows, 8);
    const { ids, mask } = paddedTokens(rows, batch!, false);
    expect(Array.from(new BigInt64Array(ids.buffer))).toEqual([5n, 6n, 7n, 8n, 0n, 0n]);
    expect(Array.from(new BigInt64Array(mask.buffer))).toEqual([1n, 1n, 1n, 1n, 0n, 0n]);
    expect(Array.from(new Int32Array(paddedTokens(rows, batch!, true).ids.buffer))).toEqual([5, 6, 7, 8, 0, 0]);
  });
});

describe('API keys', () => {
  const keys = new ApiKeys(['sk-one', 'sk-two']);
  const refusal = (header: string | undefined): OpenAiError | undefined => {
    try {
      keys.check(header);
      return undefined;
    } catch (e) {
      return e as OpenAiError;
    }
  };

  it('accepts each configured key as a Bearer token', () => {
    expect(refusal('Bearer sk-one')).toBeUndefined();
    expect(refusal('bearer sk-two')).toBeUndefined();
  });

  it('refuses a missing, malformed or wrong key with 401, never echoing it', () => {
    expect(refusal(undefined)).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(refusal('Basic c2stb25lOg==')).toMatchObject({ status: 401, code: 'missing_api_key' });
    const wrong = refusal('Bearer sk-one-but-longer')!;
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' });
    expect(refusal('Bearer sk-on')).toMatchObject({ code: 'invalid_api_key' });
  });

  it('requires nothing when no key is configured', () => {
    expect(new ApiKeys([]).required).toBe(false);
    expect(() => new ApiKeys([]).check(undefined)).not.toThrow();
  });
});

describe('OpenAI error replies', () => {
  it("keeps core's status: a full queue or a model not ready is 503, a bad argument 400", () => {
    expect(openAiErrorReply(new InferError('UNAVAILABLE', 'Exceeds maximum queue size'))).toEqual({
      status: 503,
      body: { error: { message: 'Exceeds maximum queue size', type: 'server_error', param: null, code: 'service_unavailable' } },
    });
    expect(openAiErrorReply(new InferError('INVALID_ARG', 'bad')).status).toBe(400);
    expect(openAiErrorReply(new Error('boom')).body.error.type).toBe('server_error');
  });
});

describe('OpenAI flags', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-openai-flags-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads --openai-api-key and --openai-api-key-file (a key per line, # comments)', () => {
    const file = path.join(dir, 'keys');
    writeFileSync(file, '# keys for the batch jobs\nsk-file-1\n\n  sk-file-2  \n');
    const o = parseServeFlags(['--model-repository=m', '--openai-api-key=sk-flag', `--openai-api-key-file=${file}`, '--openai-port=9000']);
    expect(o.openaiApiKeys).toEqual(['sk-flag', 'sk-file-1', 'sk-file-2']);
    expect(o.openaiPort).toBe(9000);
    expect(parseServeFlags(['--model-repository=m']).openaiPort).toBeUndefined();
  });

  it('refuses an empty or unreadable key file and a key a Bearer header cannot carry', () => {
    const empty = path.join(dir, 'empty');
    writeFileSync(empty, '# nothing\n');
    expect(() => parseServeFlags(['--model-repository=m', `--openai-api-key-file=${empty}`])).toThrow(new FlagError(`--openai-api-key-file '${empty}' holds no key`));
    expect(() => parseServeFlags(['--model-repository=m', `--openai-api-key-file=${path.join(dir, 'missing')}`])).toThrow(/cannot read --openai-api-key-file '.*missing': ENOENT/);
    expect(() => parseServeFlags(['--model-repository=m', '--openai-api-key=two words'])).toThrow('--openai-api-key: a key must be visible ASCII without spaces');
    expect(() => parseServeFlags(['--model-repository=m', '--openai-port=70000'])).toThrow("invalid value for --openai-port: '70000'");
  });
});
