/**
 * Which loaded version serves a request: Triton's model lookup by name, version and (with
 * namespacing) the namespace of the ensemble step asking, with its error messages.
 */
import { InferError } from '../errors.ts';
import { modelIdText } from '../repository/model-identifier.ts';
import type { LoadedVersion } from './loaded-version.ts';
import type { ModelLifecycle } from './model-lifecycle.ts';

/**
 * Triton's model lookup with its NOT_FOUND / UNAVAILABLE messages (docs/triton-compatibility.md §2), except for a
 * model that is known but cannot serve (its config or load failed, an instance gave up, an
 * ensemble lost a composing model): Triton answers "not found" / "no available versions" there;
 * Tritium answers UNAVAILABLE with the reason (`model 'm' version 1 is unavailable: <why>`).
 * With namespacing (Triton's FindModelIdentifier, then its lifecycle's lookup): a client's name
 * that no repository holds now is INVALID_ARG, and the lifecycle's messages name the model as
 * `namespace::name`. `namespace`: an ensemble step's, which Triton looks up by identifier.
 */
export function routeModel(
  lifecycle: ModelLifecycle,
  namespacing: boolean,
  name: string,
  version: number | undefined,
  namespace?: string,
): LoadedVersion {
  const record = lifecycle.resolve(name, namespace);
  if (namespacing && namespace === undefined && !record?.present) {
    throw new InferError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);
  }
  const prefix = `Request for unknown model: '${modelIdText(record?.namespace ?? '', name)}'`;
  if (!record || (record.slots.size === 0 && !record.resolved)) {
    if (record?.error && record.slots.size === 0) throw new InferError('UNAVAILABLE', `model '${name}' is unavailable: ${record.error}`);
    throw new InferError('NOT_FOUND', `${prefix} is not found`);
  }
  if (version === undefined || version === -1) {
    const latest = record.latestReady();
    if (latest) return latest;
    const failed = record.failedVersion();
    if (failed) throw new InferError('UNAVAILABLE', `model '${name}' version ${failed.version} is unavailable: ${failed.reason}`);
    throw new InferError('NOT_FOUND', `${prefix} has no available versions`);
  }
  const slot = record.slots.get(version);
  if (!slot) throw new InferError('NOT_FOUND', `${prefix} version ${version} is not found`);
  if (slot.state !== 'READY' || !slot.live) {
    if (slot.state === 'UNAVAILABLE' && slot.reason && slot.reason !== 'unloaded') {
      throw new InferError('UNAVAILABLE', `model '${name}' version ${version} is unavailable: ${slot.reason}`);
    }
    throw new InferError('UNAVAILABLE', `${prefix} version ${version} is not at ready state`);
  }
  return slot.live;
}

/** `routeModel`, or undefined where it would throw. */
export function tryRouteModel(
  lifecycle: ModelLifecycle,
  namespacing: boolean,
  name: string,
  version: number | undefined,
  namespace?: string,
): LoadedVersion | undefined {
  try {
    return routeModel(lifecycle, namespacing, name, version, namespace);
  } catch {
    return undefined;
  }
}
