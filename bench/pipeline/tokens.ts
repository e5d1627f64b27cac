/**
 * Token counts for the padding-efficiency targets: what a server's statistics say it computed on
 * (the `tritium.tokens` fields of the statistics extension's JSON), and what batches of a fixed size
 * in arrival order would pad to (for a configuration that does not count its tokens).
 */

export interface TokenTotals {
  /** The rows' own tokens, summed. */
  real: number;
  /** Rows × longest row of each execution, summed. */
  padded: number;
}

/** `model`'s token counts so far (zeros when it recorded none). */
export async function tokenCounts(httpUrl: string, model: string): Promise<TokenTotals> {
  const res = await fetch(`http://${httpUrl}/v2/models/${model}/stats`);
  const body = (await res.json()) as { model_stats?: { tritium?: { tokens?: TokenTotals } }[] };
  let real = 0;
  let padded = 0;
  for (const s of body.model_stats ?? []) {
    real += s.tritium?.tokens?.real ?? 0;
    padded += s.tritium?.tokens?.padded ?? 0;
  }
  return { real, padded };
}

/** Real / padded tokens of `lengths` cut, in order, into batches of `batchSize` padded to their longest. */
export function paddingEfficiency(lengths: readonly number[], batchSize: number): number {
  const size = Math.max(1, Math.round(batchSize));
  let real = 0;
  let padded = 0;
  for (let i = 0; i < lengths.length; i += size) {
    const batch = lengths.slice(i, i + size);
    real += batch.reduce((a, b) => a + b, 0);
    padded += Math.max(...batch) * batch.length;
  }
  return padded > 0 ? real / padded : 1;
}
