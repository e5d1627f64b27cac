/**
 * The arguments of a command that takes paths and some of `tritium serve`'s flags (`tritium config`,
 * `tritium types`): --help, the flags it accepts, its own switches, then at least one path. Help and
 * every refusal are written here, so each command says them the same way.
 */
import { FlagError, parseSomeServeFlags } from './flags.ts';
import type { ServeOptions } from './serve-options.ts';

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export interface PathCommandArgs {
  readonly options: ServeOptions;
  readonly paths: string[];
  /** Which of the command's own switches were given. */
  readonly switches: ReadonlySet<string>;
}

/** The parsed arguments, or the exit code when the command ends here (0 after --help, 1 after a refusal). */
export function parsePathCommandArgs(
  command: string,
  args: readonly string[],
  spec: { readonly usage: string; readonly serveFlags: readonly string[]; readonly switches?: readonly string[] },
  io: CommandIo,
): PathCommandArgs | number {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(spec.usage);
    return 0;
  }
  let parsed: { options: ServeOptions; rest: string[] };
  try {
    parsed = parseSomeServeFlags(args, spec.serveFlags);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.stderr.write(`tritium ${command}: ${e.message}\n${spec.usage}`);
    return 1;
  }
  const own = new Set(spec.switches ?? []);
  const switches = new Set(parsed.rest.filter((a) => own.has(a)));
  const paths = parsed.rest.filter((a) => !own.has(a));
  const unknown = paths.find((a) => a.startsWith('-'));
  if (unknown || paths.length === 0) {
    io.stderr.write(`${unknown ? `tritium ${command}: unknown option '${unknown}'\n` : ''}${spec.usage}`);
    return 1;
  }
  return { options: parsed.options, paths, switches };
}
