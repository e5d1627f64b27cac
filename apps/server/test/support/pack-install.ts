/**
 * Installing Tritium as a user does, for pack-install.test.ts: the workspace's publishable packages
 * packed (`npm pack`), then installed from those tarballs in projects outside the workspace, with
 * install scripts on and third-party packages from the npm registry only.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The environment of the nested npm and node: none of the settings the outer `npm test` exports for
 * the workspace (npm_package_*, npm_config_local_prefix, the workspace .npmrc's ignore-scripts, ...),
 * but the machine's own way to reach the registry and its cache. Anything an install script tries to
 * download through global-agent (onnxruntime-node's) goes to a closed loopback port and fails, so
 * an install that passes needed nothing beyond the registry.
 */
const KEEP = /^npm_config_(cache|userconfig|globalconfig|proxy|https_proxy|noproxy|cafile|ca|strict_ssl|(@[\w-]+:)?registry)$/i;
export const userEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => KEEP.test(k) || !/^npm_|^NODE_OPTIONS$|^NODE_PATH$|^ONNXRUNTIME_NODE_/i.test(k))),
  GLOBAL_AGENT_HTTP_PROXY: 'http://127.0.0.1:9',
  GLOBAL_AGENT_HTTPS_PROXY: 'http://127.0.0.1:9',
};

/** Runs a command to its end, resolving with its stdout; rejects with its output when it exits non-zero. */
export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = userEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${err}${out}`))));
  });
}

/** The workspace packages that are not private (those a user installs). */
export function publishable(): string[] {
  const workspaces = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
  const names: string[] = [];
  for (const pattern of workspaces) {
    const parent = path.join(ROOT, pattern.replace(/\/\*$/, ''));
    for (const dir of readdirSync(parent)) {
      const file = path.join(parent, dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name: string; private?: boolean };
      if (!pkg.private) names.push(pkg.name);
    }
  }
  return names.sort();
}

/** Packs `packages` into `destination`; their `file:` specs by name. */
export async function packAll(packages: readonly string[], destination: string): Promise<Record<string, string>> {
  const packed = await run('npm', ['pack', '--json', '--pack-destination', destination, ...packages.flatMap((p) => ['-w', p])], ROOT);
  return Object.fromEntries((JSON.parse(packed) as { name: string; filename: string }[]).map((p) => [p.name, `file:${path.join(destination, p.filename)}`]));
}

export interface InstalledSize {
  /** Bytes of every file under node_modules (apparent size). */
  readonly bytes: number;
  /** Installed packages (each folder with a package.json directly under a node_modules). */
  readonly packages: number;
}

/** The size of a project's node_modules, walked without following links. */
export function installedSize(project: string): InstalledSize {
  let bytes = 0;
  let packages = 0;
  const walk = (dir: string, packageParent: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        const scope = packageParent && entry.name.startsWith('@');
        if (packageParent && !scope && existsSync(path.join(p, 'package.json'))) packages++;
        walk(p, scope || entry.name === 'node_modules');
      } else if (entry.isFile()) {
        bytes += lstatSync(p).size;
      }
    }
  };
  walk(path.join(project, 'node_modules'), true);
  return { bytes, packages };
}

export const MB = 1024 * 1024;
