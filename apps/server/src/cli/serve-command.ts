/** `tritium serve`: not built yet (see the open issue that owns it). */
export async function serveCommand(_args: string[]): Promise<number> {
  process.stderr.write('tritium serve: not implemented yet\n');
  return 1;
}
