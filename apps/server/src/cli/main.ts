/**
 * `tritium <command>`: one entry point, each subcommand in its own module, loaded on demand so
 * `tritium config` does not pay for gRPC or ONNX Runtime. `tritium --version`, `tritium help
 * <command>` and `<command> --help` work for every command.
 */
import { readFileSync } from 'node:fs';

type CommandMain = (args: string[]) => Promise<number>;

export const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<CommandMain> }>> = {
  serve: {
    summary: 'serve model repositories over HTTP, gRPC and metrics (tritonserver flags)',
    load: async () => (await import('./serve-command.ts')).serveCommand,
  },
  dev: {
    summary: 'serve a repository and reload each model as its files are saved; model run answers from it, warm',
    load: async () => (await import('./dev-command.ts')).devCommand,
  },
  config: {
    summary: 'check models or repositories as serve would load them; print their configs as Triton JSON',
    load: async () => (await import('./config-command.ts')).configCommand,
  },
  types: {
    summary: 'types <model folder | repository>: write model-types.d.ts beside each model.ts from its config, and a tsconfig.json',
    load: async () => (await import('./types-command.ts')).typesCommand,
  },
  model: {
    summary: 'model run <repository>/<model> --input NAME=<json>: run any model or ensemble once, offline',
    load: async () => (await import('./model-command.ts')).modelCommand,
  },
  perf: {
    summary: 'perf_analyzer-compatible load generator',
    load: async () => (await import('./perf-command.ts')).perfCommand,
  },
  tune: {
    summary: 'find the batching and instance configuration of a model or ensemble that meets a latency budget',
    load: async () => (await import('./tune-command.ts')).tuneCommand,
  },
  deploy: {
    summary: 'print Kubernetes or KServe manifests for Tritium (deploy kubernetes|kserve --help)',
    load: async () => (await import('./deploy-command.ts')).deployCommand,
  },
};

/** This package's version (package.json sits two folders above both src/cli and a built dist/cli). */
export function tritiumVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return (
    `usage: tritium <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n` +
    `tritium <command> --help   options of one command\ntritium --version          print the version\n`
  );
}

/** The command named `name`; only the table's own entries (`constructor` is no command). */
function commandNamed(name: string | undefined): (typeof COMMANDS)[string] | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`tritium ${tritiumVersion()}\n`);
    return 0;
  }
  const helpFor = name === 'help' ? commandNamed(rest[0]) : undefined;
  if (helpFor) return (await helpFor.load())(['--help']);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? process.stdout : process.stderr).write(usage());
    return name ? 0 : 1;
  }
  const command = commandNamed(name);
  if (!command) {
    process.stderr.write(`tritium: unknown command '${name}'\n${usage()}`);
    return 1;
  }
  return (await command.load())(rest);
}
