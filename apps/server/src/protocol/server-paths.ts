/**
 * The server's file system stays out of what clients read: every error message either transport
 * sends (mapError) and every repository-index `reason` pass through `redactServerPaths`, which writes
 * a path inside a model folder the way a client names it, relative to the folder that holds the
 * model: `1/model.onnx` for a file uploaded as `file:1/model.onnx` (the upload's temporary folder,
 * `tritium-override-<pid>-XXXXXX`, disappears), `m/1/model.onnx` inside a model repository. The same
 * holds for the server's other temporary folders (`tritium-<what>-<pid>-...`, e.g. an object-store
 * repository's local copy) and its installation. The log keeps the whole paths for the operator.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where this installation lives (the checkout or image folder holding apps/ and node_modules/). */
const INSTALL_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

const roots = new Set<string>();
let pattern: RegExp | undefined;

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Adds folders whose paths are redacted (the model repositories, the repository cache). */
export function registerServerPaths(folders: readonly string[]): void {
  for (const f of folders) {
    const resolved = path.resolve(f);
    if (resolved !== path.parse(resolved).root) roots.add(resolved);
  }
  pattern = undefined;
}

registerServerPaths([INSTALL_ROOT]);

function serverPathPattern(): RegExp {
  // Longest first, so a repository inside the installation is cut at the repository.
  const folders = [...roots].sort((a, b) => b.length - a.length).map(escape);
  // The server's temporary folders: tritium-<what>-<pid>-<random>.
  folders.unshift(`${escape(os.tmpdir())}/tritium-[a-z-]+-\\d+-[A-Za-z0-9]+`);
  // As a path or a file: URL; followed by a separator (cut) or ending there (named as a whole).
  return new RegExp(`(?:file://)?(?:${folders.join('|')})(/|(?![\\w.-]))`, 'g');
}

/** `text` with every server path written relative to its model folder (see above). */
export function redactServerPaths(text: string): string {
  if (!text.includes('/')) return text;
  pattern ??= serverPathPattern();
  return text.replace(pattern, (_all, separator: string) => (separator === '/' ? '' : '<server folder>'));
}

/** Repository-index entries with their reasons redacted. */
export function redactIndexReasons<T extends { reason?: string }>(entries: readonly T[]): T[] {
  return entries.map((e) => (e.reason ? { ...e, reason: redactServerPaths(e.reason) } : e));
}
