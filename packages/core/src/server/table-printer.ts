/**
 * Triton's TablePrinter (common: src/table_printer.cc), used for the model table the server logs
 * once its models are loaded:
 *
 * ```
 * +--------+---------+--------+
 * | Model  | Version | Status |
 * +--------+---------+--------+
 * | simple | 1       | READY  |
 * +--------+---------+--------+
 * ```
 *
 * Same layout rules: every column gets an equal share of the width (Triton's 500 columns when the
 * output is not a terminal), columns narrower than their share give the excess to the wider ones,
 * and a cell longer than its column wraps onto more lines; embedded newlines start new lines.
 * Other control characters in a cell are escaped (a cell may hold a model's error message), so
 * every line of the table starts with one of its own borders.
 */
import { escapeControl } from '../logger.ts';

const DEFAULT_WIDTH = 500;

/** The table as Triton prints it, starting with a newline (it follows the log line's prefix). */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[], width = DEFAULT_WIDTH): string {
  const n = headers.length;
  const records = [headers, ...rows].map((row) => headers.map((_, i) => escapeControl(row[i] ?? '').split('\n')));
  const maxWidths = headers.map((_, i) => Math.max(0, ...records.flatMap((r) => r[i]!.map((line) => line.length))));

  // Equal shares of the usable width (Triton: two spaces and one pipe per column, plus one pipe).
  const minRequired = 2 * n + (n + 1);
  let usable = width > minRequired ? width - minRequired : n;
  const shares: number[] = [];
  const equal = Math.floor(usable / n);
  for (let i = 0; i < n; i++) {
    shares.push(equal);
    usable -= equal;
  }
  // FairShare: narrow columns hand their unused share to the columns wider than them.
  const order = [...shares.keys()].sort((a, b) => maxWidths[a]! - maxWidths[b]!);
  order.forEach((col, k) => {
    if (maxWidths[col]! < shares[col]!) {
      const excess = shares[col]! - maxWidths[col]!;
      shares[col] = maxWidths[col]!;
      const rest = order.slice(k + 1);
      for (const other of rest) shares[other] = shares[other]! + excess / rest.length;
    }
  });
  for (let i = 0; i < n; i++) shares[i] = Math.max(1, Math.floor(shares[i]!));

  // Cells longer than their column wrap onto several lines.
  const wrapped = records.map((record) =>
    record.map((lines, i) => lines.flatMap((line) => (line.length <= shares[i]! ? [line] : line.match(new RegExp(`.{1,${shares[i]}}`, 'g'))!))),
  );
  const divider = `+${shares.map((s) => '-'.repeat(s + 2)).join('+')}+\n`;
  const renderRow = (record: string[][]): string => {
    const height = Math.max(1, ...record.map((lines) => lines.length));
    let out = '';
    for (let j = 0; j < height; j++) out += `|${record.map((lines, i) => ` ${(lines[j] ?? '').padEnd(shares[i]!)} |`).join('')}\n`;
    return out;
  };
  return `\n${divider}${renderRow(wrapped[0]!)}${divider}${wrapped.slice(1).map(renderRow).join('')}${divider}`;
}
