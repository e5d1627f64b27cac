/**
 * Watches a repository for `tritium dev`: a saved file inside a model's folder names that model,
 * once per burst of events (editors write a file in several steps). `node_modules`, dot-folders
 * and editors' temporary files are ignored.
 */
import { watch, type FSWatcher } from 'node:fs';

/** Events for one model closer together than this are one change. */
export const DEV_DEBOUNCE_MS = 60;

const TEMPORARY = /(~|\.swp|\.swx|\.tmp|\.crswap)$|^#.*#$|^4913$|^\.#/;

/** The model a changed path belongs to, or undefined when the change does not matter. */
export function changedModel(relative: string): string | undefined {
  const parts = relative.split(/[\\/]/).filter((p) => p !== '');
  if (parts.length === 0) return undefined;
  if (parts.some((p) => p === 'node_modules' || p.startsWith('.'))) return undefined;
  if (TEMPORARY.test(parts.at(-1)!)) return undefined;
  // A file at the repository's top level is no model's.
  if (parts.length === 1 && parts[0]!.includes('.')) return undefined;
  return parts[0];
}

export class DevWatcher {
  private watcher: FSWatcher | undefined;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly repository: string,
    private readonly changed: (model: string) => void,
  ) {}

  start(): void {
    this.watcher = watch(this.repository, { recursive: true }, (_event, filename) => {
      if (!filename) return;
      const model = changedModel(filename.toString());
      if (!model) return;
      clearTimeout(this.timers.get(model));
      this.timers.set(
        model,
        setTimeout(() => {
          this.timers.delete(model);
          this.changed(model);
        }, DEV_DEBOUNCE_MS),
      );
    });
    this.watcher.on('error', () => undefined);
  }

  close(): void {
    this.watcher?.close();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

