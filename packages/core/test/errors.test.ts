/** InferError.quick: the cheap error for answers given at high rates (a full queue under overload). */
import { describe, expect, it } from 'vitest';
import { InferError } from '../src/index.ts';

describe('InferError.quick', () => {
  it('is a full InferError with code and message, without stack frames, and leaves the stack limit as it was', () => {
    const before = Error.stackTraceLimit;
    const e = InferError.quick('UNAVAILABLE', 'Exceeds maximum queue size');
    expect(InferError.is(e)).toBe(true);
    expect(e).toBeInstanceOf(Error);
    expect([e.code, e.message, e.toWire()]).toEqual(['UNAVAILABLE', 'Exceeds maximum queue size', { code: 'UNAVAILABLE', message: 'Exceeds maximum queue size' }]);
    expect(e.stack).toBe('InferError: Exceeds maximum queue size');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new InferError('INTERNAL', 'x').stack).toContain('errors.test.ts');
  });
});
