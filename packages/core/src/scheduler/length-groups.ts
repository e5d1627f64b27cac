/**
 * Length-aware grouping (beyond Triton): which rows of a batch run together, so that padding each
 * group to its own longest row costs as few tokens as possible.
 *
 * Rows are sorted by length and cut into consecutive groups. The cut minimizes the padded tokens
 * of all groups plus `executionTokens` for each group (what one more execution costs, in tokens:
 * without it every row would run alone), subject to the budget: a group's padded tokens (rows ×
 * its longest row) stay within `budget`, and its rows within `maxRows`. A row longer than the
 * budget runs alone. Exact (dynamic programming over the sorted rows, O(rows × rows per group)).
 */

export interface GroupingLimits {
  /** Padded tokens (rows × longest row) one group may hold. */
  readonly budget: number;
  /** Rows one group may hold (the next steps' max_batch_size). */
  readonly maxRows: number;
  /** The cost of one more execution, in tokens (≥ 0). */
  readonly executionTokens: number;
}

/**
 * Groups of item indices (each ascending by length, groups shortest first) covering every item of
 * `lengths` exactly once. An item is one row, or `rows[i]` rows of the same length (a request of
 * several rows, kept whole); a group of one item may exceed the limits.
 */
export function groupByLength(lengths: ArrayLike<number>, limits: GroupingLimits, rows?: ArrayLike<number>): number[][] {
  const n = lengths.length;
  if (n === 0) return [];
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
  const len = (k: number): number => Math.max(1, lengths[order[k]!]!);
  const weight = (k: number): number => (rows ? rows[order[k]!]! : 1);
  // best[i]: least cost of grouping the i shortest items; from[i]: where the last group starts.
  const best = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
  const from = new Int32Array(n + 1);
  best[0] = 0;
  for (let i = 1; i <= n; i++) {
    const longest = len(i - 1);
    let groupRows = 0;
    for (let j = i - 1; j >= 0; j--) {
      groupRows += weight(j);
      if (j < i - 1 && (groupRows > limits.maxRows || groupRows * longest > limits.budget)) break;
      const cost = best[j]! + groupRows * longest + limits.executionTokens;
      if (cost < best[i]!) {
        best[i] = cost;
        from[i] = j;
      }
    }
  }
  const groups: number[][] = [];
  for (let i = n; i > 0; i = from[i]!) groups.push(order.slice(from[i]!, i));
  return groups.reverse();
}

/** Real and padded tokens of `groups` (each padded to its longest row). */
export function paddingOf(lengths: ArrayLike<number>, groups: readonly (readonly number[])[]): { real: number; padded: number } {
  let real = 0;
  let padded = 0;
  for (const g of groups) {
    let longest = 0;
    for (const r of g) {
      real += lengths[r]!;
      longest = Math.max(longest, lengths[r]!);
    }
    padded += longest * g.length;
  }
  return { real, padded };
}
