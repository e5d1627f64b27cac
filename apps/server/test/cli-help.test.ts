/** `tritium --version`, `tritium help <command>` and `--help` on every subcommand (exit 0, usage on stdout). */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS, main } from '../src/cli/main.ts';

function capture(): { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
  return { out: () => out, err: () => err };
}

afterEach(() => vi.restoreAllMocks());

describe('tritium CLI help and version', () => {
  it('prints the package version', async () => {
    const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const io = capture();
      expect(await main([flag])).toBe(0);
      expect(io.out()).toBe(`tritium ${version}\n`);
      vi.restoreAllMocks();
    }
  });

  it('lists every command and how to get help', async () => {
    const io = capture();
    expect(await main(['--help'])).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(io.out()).toContain(`  ${name} `);
    expect(io.out()).toContain('tritium --version');
  });

  const cases = Object.keys(COMMANDS).flatMap((name) => [
    [name, [name, '--help']],
    [name, [name, '-h']],
    [name, ['help', name]],
    ...(name === 'model' ? [[name, ['model', 'run', '--help']] as const] : []),
  ]) as [string, string[]][];
  it.each(cases)('%s: %j exits 0 with usage on stdout and nothing on stderr', async (name, argv) => {
    const io = capture();
    expect(await main(argv)).toBe(0);
    expect(io.out()).toMatch(new RegExp(`^usage: tritium ${name}\\b`, 'm'));
    expect(io.err()).toBe('');
  });

  it('an unknown command exits 1 naming it', async () => {
    const io = capture();
    expect(await main(['serv'])).toBe(1);
    expect(io.err()).toContain("tritium: unknown command 'serv'");
  });

  it.each(['constructor', 'toString', '__proto__'])("'%s' (a property every object inherits) is an unknown command", async (name) => {
    const io = capture();
    expect(await main([name])).toBe(1);
    expect(io.err()).toContain(`tritium: unknown command '${name}'`);
    vi.restoreAllMocks();
    const help = capture();
    expect(await main(['help', name])).toBe(0);
    expect(help.out()).toMatch(/^usage: tritium <command>/);
  });
});
