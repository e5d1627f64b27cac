/**
 * `tritium <command>`: one entry point, each subcommand in its own module, loaded on demand so
 * `tritium config` does not pay for gRPC or ONNX Runtime.
 */
type CommandMain = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandMain> }> = {
  serve: {
    summary: 'serve model repositories over HTTP, gRPC and metrics (tritonserver flags)',
    load: async () => (await import('./serve-command.ts')).serveCommand,
  },
  config: {
    summary: 'print a config.pbtxt normalized, as Triton JSON (or file:line:column: error)',
    load: async () => (await import('./config-command.ts')).configCommand,
  },
  model: {
    summary: 'model run <folder> --input NAME=<json>: run a model.ts once without a server',
    load: async () => (await import('./model-command.ts')).modelCommand,
  },
  perf: {
    summary: 'perf_analyzer-compatible load generator',
    load: async () => (await import('./perf-command.ts')).perfCommand,
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return `usage: tritium <command> [options]\n\ncommands:\n${lines.join('\n')}\n`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 1;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`tritium: unknown command '${name}'\n${usage()}`);
    return 1;
  }
  return (await command.load())(rest);
}
