/**
 * A model folder may carry its own `package.json`: then its bare imports resolve from its own
 * `node_modules` only, never from the server's packages (see the README's "Per-model dependencies").
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { InferError, type Logger } from '@tritium/core';

/** `<modelDir>/package.json` when the model carries one (a regular file), else undefined. */
export async function ownPackageFile(modelDir: string): Promise<string | undefined> {
  const file = path.join(path.resolve(modelDir), 'package.json');
  const st = await stat(file).catch(() => undefined);
  return st?.isFile() ? file : undefined;
}

/** How long `npm ci` at load may take; past it the load fails. */
export const INSTALL_TIMEOUT_MS = 300_000;

/**
 * `--model-install-dependencies`: a model folder with its own package.json and a lockfile but no
 * node_modules gets `npm ci --omit=dev --ignore-scripts` (no install scripts run with the server's
 * rights) before it is bundled; within INSTALL_TIMEOUT_MS, else the load fails INVALID_ARG with
 * npm's last lines. A folder with node_modules already is left as it is.
 */
export async function installOwnPackages(model: string, modelDir: string, log: Logger): Promise<void> {
  const dir = path.resolve(modelDir);
  if (!(await ownPackageFile(dir))) return;
  if (await stat(path.join(dir, 'node_modules')).then(() => true, () => false)) return;
  const lockfiles = await Promise.all(['package-lock.json', 'npm-shrinkwrap.json'].map((f) => stat(path.join(dir, f)).then(() => true, () => false)));
  if (!lockfiles.some(Boolean)) {
    throw new InferError('INVALID_ARG', `model '${model}': ${dir} has a package.json but no package-lock.json: npm ci needs one (run npm install there once)`);
  }
  log.info(`model '${model}': npm ci --omit=dev --ignore-scripts in ${dir} (--model-install-dependencies)`);
  await new Promise<void>((resolve, reject) => {
    execFile(
      'npm',
      ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: dir, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (!error) return resolve();
        const tail = String(stderr).trim().split('\n').slice(-5).join('\n');
        reject(new InferError('INVALID_ARG', `model '${model}': npm ci in ${dir} failed (${error.killed ? `over ${INSTALL_TIMEOUT_MS} ms` : `exit ${error.code}`}):\n${tail}`));
      },
    );
  });
}
