/**
 * Runs first in every worker (thread or child process), before any model code is imported: removes
 * the doors from a model's code to the engine under it.
 *
 * - `v8.setFlagsFromString`: V8 flags are process-wide and meant to be set at start; from model code
 *   `--allow-natives-syntax` opened V8's internal functions (`%DebugPrint`, ...), and other flags
 *   change how the whole engine (the server's, for a thread) compiles and collects.
 * - `v8.setHeapSnapshotNearHeapLimit` and `trace_events.createTracing`: both make Node write files
 *   (a heap snapshot, `node_trace.N.log`) into the working folder from native code, past the
 *   permission model's write ban.
 *
 * Each is replaced on the module's exports object by a function that throws, made read-only and
 * non-configurable, and the ES module namespaces are synced (`syncBuiltinESMExports`), so
 * `import { setFlagsFromString } from 'node:v8'`, `import v8 from 'v8'`, `createRequire(...)('v8')`
 * and `process.getBuiltinModule('v8')` all reach the replacement. `process.binding('v8')` (which
 * holds the raw binding) is refused: the permission model already refuses `process.binding` in a
 * child process; in a thread it is wrapped here. Internal modules stay unreachable
 * (`--expose-internals` is a start-up flag, and the child's environment holds no NODE_OPTIONS).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);

/** The error every closed door throws. */
export function lockedError(what: string): Error {
  return new Error(`${what} is not available to model code (the server sets the engine's flags and diagnostics)`);
}

function closeDoor(moduleName: string, exportName: string): void {
  let exports: Record<string, unknown>;
  try {
    exports = require(moduleName) as Record<string, unknown>;
  } catch {
    return; // not available here (trace_events in a worker thread): no door to close
  }
  const what = `${moduleName.replace(/^node:/, '')}.${exportName}`;
  const refuse = function refuse(): never {
    throw lockedError(what);
  };
  Object.defineProperty(exports, exportName, { value: refuse, writable: false, configurable: false, enumerable: true });
}

let locked = false;

/** Closes the doors (once per worker; a second call changes nothing). */
export function lockDownRuntime(): void {
  if (locked) return;
  locked = true;
  closeDoor('node:v8', 'setFlagsFromString');
  closeDoor('node:v8', 'setHeapSnapshotNearHeapLimit');
  closeDoor('node:trace_events', 'createTracing');
  syncBuiltinESMExports();
  const binding = (process as { binding?: (name: string) => unknown }).binding;
  if (typeof binding === 'function') {
    const guarded = function binding(this: unknown, name: string): unknown {
      if (name === 'v8' || name === 'trace_events') throw lockedError(`process.binding('${name}')`);
      return Reflect.apply(binding, process, [name]);
    };
    Object.defineProperty(process, 'binding', { value: guarded, writable: false, configurable: false, enumerable: false });
  }
}
