/**
 * @tritium/core/testing — small REAL backends for tests, each running its instances in real worker
 * threads through the core worker host (like Triton's QA identity / add_sub / fault backends).
 *
 * @example
 * ```ts
 * import { identityBackend, faultBackend } from '@tritium/core/testing';
 * const backends = [identityBackend(), faultBackend({ executeTimeoutMs: 500 })];
 * // config.pbtxt: backend: "fault" … a request with parameter fault="exit" kills its worker;
 * // only that request fails (INTERNAL) and the instance restarts.
 * ```
 */
import type { Backend } from '../backend/spi.ts';
import { workerTestBackend, type TestBackendOptions } from './test-backend.ts';

export type { TestBackendOptions } from './test-backend.ts';
export type { TestModelInit } from './entries/common.ts';
export { workerTestBackend } from './test-backend.ts';
/** The scheduler's injectable clock for deterministic tests (owned by the scheduler; re-exported here). */
export { manualClock } from '../scheduler/manual-clock.ts';
export type { ManualClock } from '../scheduler/manual-clock.ts';

/** Backend `identity`: output i = input i of the config (any datatype and shape), per request. */
export function identityBackend(options?: TestBackendOptions): Backend {
  return workerTestBackend('identity', new URL('./entries/identity.ts', import.meta.url), options);
}

/** Backend `addsub`: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 (INT32 or FP32, equal shapes). */
export function addSubBackend(options?: TestBackendOptions): Backend {
  return workerTestBackend('addsub', new URL('./entries/addsub.ts', import.meta.url), options);
}

/**
 * Backend `fault`: echoes like `identity`, but a request's `fault` parameter (or BYTES input `FAULT`)
 * picks a behaviour: `ok` · `fail` (that request fails INVALID_ARG) · `reject` (the whole batch
 * fails, the worker lives) · `throw` (uncaught exception) · `exit` (process.exit(3)) · `hang`
 * (busy loop; needs `executeTimeoutMs`) · `oom` (needs `resourceLimits`) · `delay:<ms>` ·
 * `read:<path>` (returns the file's bytes as UINT8 OUTPUT0) · `bls:<model>` (forwards the inputs to
 * another model and returns its outputs).
 */
export function faultBackend(options?: TestBackendOptions): Backend {
  return workerTestBackend('fault', new URL('./entries/fault.ts', import.meta.url), options);
}

/**
 * The worker entry modules, for tests that drive `spawnWorkerInstance` directly: the three above,
 * plus `decoupled` (request parameter `count` responses per request, each OUTPUT0 = [k]),
 * `initFails` (createInstance rejects INVALID_ARG `bad init: <init.reason>`) and `noCreate` (exports
 * no createInstance).
 */
export const TEST_ENTRIES = {
  identity: new URL('./entries/identity.ts', import.meta.url),
  addsub: new URL('./entries/addsub.ts', import.meta.url),
  fault: new URL('./entries/fault.ts', import.meta.url),
  decoupled: new URL('./entries/decoupled.ts', import.meta.url),
  initFails: new URL('./entries/init-fails.ts', import.meta.url),
  noCreate: new URL('./entries/no-create.ts', import.meta.url),
} as const;
export { captureLog } from './capture-log.ts';
export type { CapturedLog } from './capture-log.ts';
export { loadTestInstance, testRequest, neverAborted } from './load-instance.ts';
export type { LoadedTestInstance, LoadTestInstanceOptions } from './load-instance.ts';
export { backendConformanceSuite } from './conformance/backend-conformance.ts';
export type { BackendConformanceSubject } from './conformance/backend-conformance.ts';
export { repositorySourceConformanceSuite } from './conformance/repository-source-conformance.ts';
export type { RepositorySourceConformanceSubject, OpenedRepository } from './conformance/repository-source-conformance.ts';
export type { ConformanceCase, ConformanceSuite } from './conformance/conformance-case.ts';
