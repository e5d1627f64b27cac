import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes model bytes to `path`, creating its folder. */
export async function writeModel(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}
