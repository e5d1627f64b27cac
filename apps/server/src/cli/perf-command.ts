/** `tritium perf`: perf_analyzer's command line, run by `@tritium/perf` (tools/perf). */
export async function perfCommand(args: string[]): Promise<number> {
  const { perfMain } = await import('@tritium/perf');
  return perfMain(args);
}
