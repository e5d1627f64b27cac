/**
 * `model_repository_agents`: the agents Triton runs on a model's folder before it reads anything else
 * of it (CreateAgentModelListWithLoadAction). Tritium has the one agent Triton ships, `checksum`
 * (triton-inference-server/checksum_repository_agent), with its messages; any other agent name is
 * refused as Triton refuses an agent it cannot find, rather than loading the model unchecked.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ModelConfig } from '../config/model-config.ts';
import { InferError } from '../errors.ts';
import { assertRealPathInside, joinInside } from './safe-path.ts';

/** The agents this server has, by name. */
const AGENTS: ReadonlyMap<string, (modelDir: string, parameters: Readonly<Record<string, string>>) => Promise<void>> = new Map([
  ['checksum', checksumAgent],
]);

/**
 * Runs every agent the config names, in order, on the model folder `modelDir`, as Triton does on
 * load. Throws INVALID_ARG (UNSUPPORTED for an unknown checksum algorithm) with Triton's message.
 */
export async function runRepositoryAgents(config: ModelConfig, modelDir: string): Promise<void> {
  for (const agent of config.model_repository_agents?.agents ?? []) {
    const run = AGENTS.get(agent.name);
    if (!run) {
      throw new InferError(
        'INVALID_ARG',
        `unable to find 'libtritonrepoagent_${agent.name}.so' for repo agent '${agent.name}': ` +
          `the repository agents of this server are: ${[...AGENTS.keys()].join(', ')}`,
      );
    }
    await run(modelDir, agent.parameters);
  }
}

/**
 * The checksum agent: each parameter `<ALGORITHM>:<file relative to the model folder>` → expected
 * hex digest. MD5 is the one algorithm it knows. Beyond Triton, the file must stay inside the
 * model folder (symlinks included): through the load API a config could otherwise ask whether any
 * file the server can read has a given hash.
 */
async function checksumAgent(modelDir: string, parameters: Readonly<Record<string, string>>): Promise<void> {
  for (const [key, expected] of Object.entries(parameters)) {
    const colon = key.indexOf(':');
    if (colon < 0) throw new InferError('INVALID_ARG', `failed to parse key: ${key}`);
    const algorithm = key.slice(0, colon);
    if (algorithm.toLowerCase() !== 'md5') throw new InferError('UNSUPPORTED', `Unsupported checksum algorithm: ${algorithm}`);
    const file = key.slice(colon + 1);
    let got: string;
    try {
      const full = joinInside(modelDir, file, 'checksum file');
      got = await md5Of(await assertRealPathInside(modelDir, full, 'checksum file'));
    } catch (err) {
      throw new InferError('INVALID_ARG', `failed to open text file for read ${file}: ${(err as Error).message}`);
    }
    if (got !== expected) {
      throw new InferError('INVALID_ARG', `Mismatched MD5 hash for file ${file}, expect: ${expected}, got: ${got}`);
    }
  }
}

/**
 * Digests of files already hashed, by path, size, inode and mtime: a polling server reads every model
 * again each poll, and a multi-gigabyte model file need not be hashed again until it changes.
 */
const digests = new Map<string, string>();
const MAX_REMEMBERED_DIGESTS = 1024;

async function md5Of(file: string): Promise<string> {
  const st = await stat(file, { bigint: true });
  const key = `${file}\0${st.size}\0${st.ino}\0${st.mtimeNs}`;
  const known = digests.get(key);
  if (known !== undefined) return known;
  // Streamed: model files pass the 2 GiB a single Buffer may hold.
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  if (digests.size >= MAX_REMEMBERED_DIGESTS) digests.delete(digests.keys().next().value!);
  digests.set(key, digest);
  return digest;
}
