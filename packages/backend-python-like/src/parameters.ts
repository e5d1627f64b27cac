import { InferError, type ModelConfig } from '@tritium/core';
import {
  boolParameter,
  durationParameter,
  ISOLATION_KEYS,
  isolationParameters,
  type IsolationDefaults,
  type IsolationParameters,
  type ReadinessPolicy,
} from '@tritium/core/worker';

/**
 * The python-like backend's config `parameters` (all optional), e.g.
 * `parameters { key: "tritium.heap_mb" value: { string_value: "256" } }`: core's isolation keys
 * (`tritium.isolation`, `heap_mb`, `memory_mb`, `execute_timeout_ms`, `execute_warn_ms`,
 * `start_timeout_ms`; see core's isolation-parameters.ts and the README), and these:
 *
 * | key | meaning | default |
 * |---|---|---|
 * | `tritium.allow_addons` | `true`: process isolation may load native addons (e.g. onnxruntime-node, sharp); native code is outside the permission model | `false` |
 * | `tritium.env` | process isolation: comma-separated names of the server's environment variables the child sees | none |
 * | `tritium.allow_network` | process isolation: `true` keeps the network (no network namespace) | `false` |
 * | `tritium.type_check` | `error`, `warn` or `off`: what a type error in model.ts does to the load (see type-check/model-check.ts) | the server's `--model-type-check` |
 * | `tritium.ready_poll_ms` | how often a model's `isReady()` is asked, at least 100 (see readinessPolicy) | 5000 |
 * | `tritium.ready_timeout_ms` | how long an `isReady()` answer may take, at most the poll interval | 1000 |
 */
export interface SandboxParameters extends IsolationParameters {
  readonly allowAddons: boolean;
  /** Names of the environment variables a process-isolated instance sees. */
  readonly env: readonly string[];
  readonly allowNetwork: boolean;
}

export const PARAMETER_KEYS = {
  ...ISOLATION_KEYS,
  allowAddons: 'tritium.allow_addons',
  env: 'tritium.env',
  allowNetwork: 'tritium.allow_network',
  typeCheck: 'tritium.type_check',
  readyPollMs: 'tritium.ready_poll_ms',
  readyTimeoutMs: 'tritium.ready_timeout_ms',
} as const;

/** The least `tritium.ready_poll_ms`: each question costs a message each way and a call into the model. */
export const MIN_READY_POLL_MS = 100;

/**
 * How a model's `isReady()` is asked (only a model that has one is): every `tritium.ready_poll_ms`
 * (5 s; at least 100 ms), each answer within `tritium.ready_timeout_ms` (1 s; at most the interval).
 */
export function readinessPolicy(config: ModelConfig): ReadinessPolicy {
  const intervalMs = durationParameter(config, PARAMETER_KEYS.readyPollMs) ?? 5000;
  if (intervalMs < MIN_READY_POLL_MS) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${PARAMETER_KEYS.readyPollMs}' must be at least ${MIN_READY_POLL_MS} (ms), got '${intervalMs}'`);
  }
  const timeoutMs = durationParameter(config, PARAMETER_KEYS.readyTimeoutMs) ?? Math.min(1000, intervalMs);
  if (timeoutMs > intervalMs) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.readyTimeoutMs}' (${timeoutMs}) must be at most '${PARAMETER_KEYS.readyPollMs}' (${intervalMs})`,
    );
  }
  return { intervalMs, timeoutMs };
}
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables that change how the sandboxed child itself starts (Node flags such as --allow-fs-write, the dynamic loader, the IPC channel). */
const SANDBOX_ENV = /^(NODE_OPTIONS|NODE_CHANNEL_\w*|NODE_UNIQUE_ID|LD_\w*)$/;

function envNames(config: ModelConfig): string[] {
  const raw = config.parameters?.[PARAMETER_KEYS.env]?.string_value ?? '';
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.find((n) => !ENV_NAME.test(n));
  if (bad !== undefined) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.env}' must be a comma-separated list of environment variable names, got '${bad}'`,
    );
  }
  const unsafe = names.find((n) => SANDBOX_ENV.test(n));
  if (unsafe !== undefined) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.env}' may not pass '${unsafe}': it changes how the sandboxed process starts`,
    );
  }
  return [...new Set(names)];
}

/**
 * Reads and validates the sandbox parameters; INVALID_ARG naming the key on a bad value.
 * `forceProcess` (the model's files were uploaded through the load API) makes the isolation
 * `process` whatever the config says, and its config may not widen that sandbox.
 */
export function sandboxParameters(config: ModelConfig, defaults: IsolationDefaults = {}): SandboxParameters {
  const isolation = isolationParameters(config, defaults);
  const env = envNames(config);
  const allowNetwork = boolParameter(config, PARAMETER_KEYS.allowNetwork);
  const allowAddons = boolParameter(config, PARAMETER_KEYS.allowAddons);
  if (defaults.forceProcess) {
    // Uploaded code is untrusted: its own config may not widen the sandbox it is forced into.
    const widening = [
      env.length > 0 ? PARAMETER_KEYS.env : undefined,
      allowNetwork ? PARAMETER_KEYS.allowNetwork : undefined,
      allowAddons ? PARAMETER_KEYS.allowAddons : undefined,
    ].filter((k) => k !== undefined);
    if (widening.length > 0) {
      throw new InferError(
        'INVALID_ARG',
        `model '${config.name}': parameter '${widening[0]}' is refused for a model whose files were uploaded through the load API ` +
          `(its code runs in the process sandbox, which its own config may not widen)`,
      );
    }
  }
  return { ...isolation, allowAddons, env, allowNetwork };
}
