/**
 * The JSON parser's worker threads hold the process only while they parse: an idle one never keeps
 * it alive (a server stopped in process, or a parser left open, exits once nothing else runs), and a
 * parse in progress finishes. Node refs a worker's message port again when a 'message' listener is
 * added after `unref()`, which had left every spawned parser worker holding the process for good.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PARSER = fileURLToPath(new URL('../dist/http/json-parser.js', import.meta.url));

describe('JSON parser workers and process exit', () => {
  it('a process that parsed a body in a worker and never closed the parser gets the result, then exits by itself', async () => {
    const script = `
      const { JsonParser } = await import(${JSON.stringify(PARSER)});
      const parser = new JsonParser({ inlineBelowBytes: 0, workers: 1 });
      const value = await parser.parse(new TextEncoder().encode('{"inputs":[1,2,3]}'));
      console.log('parsed', JSON.stringify(value));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    // A process held alive by the worker never exits; the kill only ends the test's wait for it.
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    clearTimeout(kill);
    expect(out).toContain('parsed {"inputs":[1,2,3]}');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 30_000);
});
