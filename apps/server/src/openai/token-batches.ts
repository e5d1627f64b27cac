/**
 * Token-id inputs as padded requests. Rows of one request must have one length, so shorter rows are
 * padded (id 0, mask 0); padding costs memory and compute that the client did not send, so rows are
 * grouped longest first and a group takes another row only while its padded size stays within
 * twice its real tokens (plus a little): one 8192-token row beside 2047 one-token rows pads to
 * about the same size, never to 2048 x 8192.
 */

export interface TokenBatch {
  /** Positions of the rows in the request's `input`. */
  readonly rows: readonly number[];
  /** The longest row's length: every row is padded to it. */
  readonly length: number;
}

/** Padded elements a group may have beyond twice its tokens (small groups of short rows). */
const PADDING_SLACK = 64;

/** Groups rows into batches of at most `maxRows` rows each (1 for a model that does not batch). */
export function tokenBatches(rows: readonly (readonly number[])[], maxRows: number): TokenBatch[] {
  const order = rows.map((_, i) => i).sort((a, b) => rows[b]!.length - rows[a]!.length || a - b);
  const batches: TokenBatch[] = [];
  let current: number[] = [];
  let length = 0;
  let tokens = 0;
  for (const i of order) {
    const n = rows[i]!.length;
    const fits = current.length > 0 && current.length < maxRows && (current.length + 1) * length <= 2 * (tokens + n) + PADDING_SLACK;
    if (!fits) {
      if (current.length > 0) batches.push({ rows: current, length });
      current = [];
      length = n;
      tokens = 0;
    }
    current.push(i);
    tokens += n;
  }
  if (current.length > 0) batches.push({ rows: current, length });
  return batches;
}

/** The ids and mask of one batch, row-major [rows, length], as INT64 or INT32. */
export function paddedTokens(rows: readonly (readonly number[])[], batch: TokenBatch, int32: boolean): { ids: Uint8Array; mask: Uint8Array } {
  const size = batch.rows.length * batch.length;
  if (int32) {
    const ids = new Int32Array(size);
    const mask = new Int32Array(size);
    batch.rows.forEach((row, r) => {
      const values = rows[row]!;
      for (let t = 0; t < values.length; t++) {
        ids[r * batch.length + t] = values[t]!;
        mask[r * batch.length + t] = 1;
      }
    });
    return { ids: new Uint8Array(ids.buffer), mask: new Uint8Array(mask.buffer) };
  }
  const ids = new BigInt64Array(size);
  const mask = new BigInt64Array(size);
  batch.rows.forEach((row, r) => {
    const values = rows[row]!;
    for (let t = 0; t < values.length; t++) {
      ids[r * batch.length + t] = BigInt(values[t]!);
      mask[r * batch.length + t] = 1n;
    }
  });
  return { ids: new Uint8Array(ids.buffer), mask: new Uint8Array(mask.buffer) };
}
