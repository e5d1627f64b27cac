/** What every transport shares: the server API, limits, shared-memory regions, settings, the log. */
import { InferError, type InferenceServerApi } from '@tritium/core';
import type { TransportLimits } from './limits.ts';
import type { SharedMemoryRegistry } from './shared-memory.ts';
import type { TraceSettingsStore } from './settings.ts';
import type { TritonLog } from '../logging/triton-log.ts';

export interface TransportContext {
  readonly api: InferenceServerApi;
  readonly limits: TransportLimits;
  readonly shm: SharedMemoryRegistry;
  readonly trace: TraceSettingsStore;
  readonly log: TritonLog;
  /** Whether the load API may carry model files (`file:<version>/<name>` parameters). */
  readonly allowModelFileLoad: boolean;
}

/** A wire version string → number; '' → undefined (the policy's version). Non-numeric → INVALID_ARG. */
export function parseVersion(version: string | undefined): number | undefined {
  if (version === undefined || version === '') return undefined;
  if (!/^\d+$/.test(version) || !Number.isSafeInteger(Number(version))) {
    throw new InferError('INVALID_ARG', `failed to parse model version '${version}': expected a non-negative integer`);
  }
  return Number(version);
}

/** A wire version string checked and passed on as the API's optional string ('' → undefined). */
export function versionArg(version: string | undefined): string | undefined {
  return parseVersion(version) === undefined ? undefined : version;
}
