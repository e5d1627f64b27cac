/** Length grouping (scheduler/length-groups.ts) and its config (scheduler/token-budget.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupByLength, paddingOf } from '../../src/scheduler/length-groups.ts';
import { tokenBudgetOf } from '../../src/scheduler/token-budget.ts';

const params = (entries: Record<string, string>) => ({
  name: 'E',
  parameters: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, { string_value: v }])),
});

describe('groupByLength', () => {
  it('covers every row once, keeps groups within the budget and the row limit, and never pads more than one batch', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 100 }),
        (lengths, budget, maxRows, executionTokens) => {
          const groups = groupByLength(lengths, { budget, maxRows, executionTokens });
          expect(groups.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
          for (const g of groups) {
            if (g.length === 1) continue;
            expect(g.length).toBeLessThanOrEqual(maxRows);
            expect(g.length * Math.max(1, ...g.map((r) => lengths[r]!))).toBeLessThanOrEqual(budget);
          }
          // Rows sorted by length: groups do not interleave.
          for (let k = 1; k < groups.length; k++) {
            expect(Math.max(...groups[k - 1]!.map((r) => lengths[r]!))).toBeLessThanOrEqual(Math.min(...groups[k]!.map((r) => lengths[r]!)));
          }
        },
      ),
    );
  });

  it('trades padding against executions by the execution cost', () => {
    const lengths = [4, 5, 6, 60, 61, 62, 200];
    // Free executions: no padding at all, however many groups that takes.
    expect(paddingOf(lengths, groupByLength(lengths, { budget: 10_000, maxRows: 64, executionTokens: 0 })).padded).toBe(398);
    // Costly executions: one group (padded to 200) costs 1400 + c, the least of all once c is large.
    expect(groupByLength(lengths, { budget: 10_000, maxRows: 64, executionTokens: 10_000 })).toHaveLength(1);
    // In between: the three natural groups.
    expect(groupByLength(lengths, { budget: 10_000, maxRows: 64, executionTokens: 16 })).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    // The budget splits what the cost alone would keep together.
    expect(groupByLength(lengths, { budget: 200, maxRows: 64, executionTokens: 10_000 }).every((g) => g.length * Math.max(...g.map((r) => lengths[r]!)) <= 200 || g.length === 1)).toBe(true);
  });
});

describe('tritium.batch_tokens parameters', () => {
  it('reads the budget, the lengths tensor and the execution cost', () => {
    expect(tokenBudgetOf(params({}))).toBeUndefined();
    expect(tokenBudgetOf(params({ 'tritium.batch_tokens': '2048', 'tritium.batch_tokens.lengths': ' mask ' }))).toEqual({ budget: 2048, lengths: 'mask', executionTokens: 16 });
    expect(tokenBudgetOf(params({ 'tritium.batch_tokens': '64', 'tritium.batch_tokens.lengths': 'm', 'tritium.batch_tokens.execution_cost': '2.5' }))?.executionTokens).toBe(2.5);
  });

  it.each([
    [{ 'tritium.batch_tokens': '0', 'tritium.batch_tokens.lengths': 'm' }, "parameter 'tritium.batch_tokens' must be an integer from 1 to 1073741824 (padded tokens per execution), got '0'"],
    [{ 'tritium.batch_tokens': '1e3', 'tritium.batch_tokens.lengths': 'm' }, "parameter 'tritium.batch_tokens' must be an integer from 1 to 1073741824 (padded tokens per execution), got '1e3'"],
    [{ 'tritium.batch_tokens': '99999999999', 'tritium.batch_tokens.lengths': 'm' }, "got '99999999999'"],
    [{ 'tritium.batch_tokens': '64' }, "parameter 'tritium.batch_tokens.lengths' must name the tensor that holds the rows' lengths when 'tritium.batch_tokens' is set, got ''"],
    [{ 'tritium.batch_tokens': '64', 'tritium.batch_tokens.lengths': 'm', 'tritium.batch_tokens.execution_cost': '-1' }, "parameter 'tritium.batch_tokens.execution_cost' must be a number of tokens, 0 or more, got '-1'"],
    [{ 'tritium.batch_tokens.lengths': 'm' }, "parameter 'tritium.batch_tokens.lengths' needs 'tritium.batch_tokens' (the padded-token budget) beside it, got 'm'"],
  ])('refuses %j naming the parameter and value', (entries, message) => {
    expect(() => tokenBudgetOf(params(entries))).toThrow(message);
    try {
      tokenBudgetOf(params(entries));
    } catch (e) {
      expect((e as { code: string }).code).toBe('INVALID_ARG');
      expect((e as Error).message).toContain("model 'E'");
    }
  });
});
