/** `tritium model`: not built yet (see the open issue that owns it). */
export async function modelCommand(_args: string[]): Promise<number> {
  process.stderr.write('tritium model: not implemented yet\n');
  return 1;
}
