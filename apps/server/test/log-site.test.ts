import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { logBlock } from '@tritium/core';
import { TritonLog } from '../src/logging/triton-log.ts';

function capture(): { log: TritonLog; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  const log = new TritonLog({ info: true, warning: true, error: true, verbose: 0, format: 'default' }, stream);
  return { log, text: () => text };
}

describe('the file:line of a log line', () => {
  it('names the caller of a message', () => {
    const { log, text } = capture();
    log.info('hello');
    expect(text()).toMatch(/ log-site\.test\.ts:\d+\] hello\n$/);
  });

  it("names the caller of core's logBlock, not the helper that forwards the table", () => {
    const { log, text } = capture();
    logBlock(log, 'info', '+---+\n| a |\n+---+\n');
    const first = text().split('\n')[0]!;
    expect(first).toMatch(/ log-site\.test\.ts:\d+\] \+---\+$/);
    expect(text()).not.toContain('logger.');
  });
});
