/** `tritium perf`: not built yet (see the open issue that owns it). */
export async function perfCommand(_args: string[]): Promise<number> {
  process.stderr.write('tritium perf: not implemented yet\n');
  return 1;
}
