/** `tritium config`: not built yet (see the open issue that owns it). */
export async function configCommand(_args: string[]): Promise<number> {
  process.stderr.write('tritium config: not implemented yet\n');
  return 1;
}
