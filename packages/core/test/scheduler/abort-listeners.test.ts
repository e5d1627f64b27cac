import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/scheduler/abort-listeners.ts';

describe('abort listeners', () => {
  it('run once each, in the order added; a removed one is not called', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    onAbort(controller.signal, () => calls.push(1));
    const remove = onAbort(controller.signal, () => calls.push(2));
    onAbort(controller.signal, () => calls.push(3));
    remove();
    controller.abort();
    controller.abort();
    expect(calls).toEqual([1, 3]);
  });

  it('as EventTarget listeners: one removed during the dispatch is skipped, one added during it is not called', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    onAbort(controller.signal, () => {
      calls.push(1);
      removeSecond();
      onAbort(controller.signal, () => calls.push(4));
    });
    const removeSecond = onAbort(controller.signal, () => calls.push(2));
    onAbort(controller.signal, () => calls.push(3));
    controller.abort();
    expect(calls).toEqual([1, 3]);
  });

  it('a listener that throws does not stop the others; its error is reported as uncaught', async () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const uncaught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    onAbort(controller.signal, () => {
      throw new Error('listener failed');
    });
    onAbort(controller.signal, () => calls.push(2));
    controller.abort();
    expect(calls).toEqual([2]);
    expect(((await uncaught) as Error).message).toBe('listener failed');
  });

  it('keeps listeners of different signals apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const calls: string[] = [];
    onAbort(a.signal, () => calls.push('a'));
    onAbort(b.signal, () => calls.push('b'));
    b.abort();
    expect(calls).toEqual(['b']);
  });
});
