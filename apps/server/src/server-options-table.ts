/**
 * The options table tritonserver logs once its models are loaded (core's TRITONSERVER_ServerNew),
 * row for row in Triton's order, so an operator reading the log (or a script grepping it for
 * `server_id`, `model_control_mode`) finds what it finds in Triton's. Rows for what Tritium does not
 * have (the pinned and CUDA memory pools, the minimum compute capability) are left out.
 */
import { type ServerMetadata } from '@tritium/core';
import { formatTable } from '@tritium/core/server';
import type { ServeOptions } from './cli/serve-options.ts';

const CONTROL_MODE = { none: 'MODE_NONE', poll: 'MODE_POLL', explicit: 'MODE_EXPLICIT' } as const;

type TableOptions = Pick<
  ServeOptions,
  | 'modelRepositories'
  | 'modelControlMode'
  | 'loadModels'
  | 'strictModelConfig'
  | 'disableAutoCompleteConfig'
  | 'modelConfigName'
  | 'rateLimit'
  | 'rateLimitResources'
  | 'strictReadiness'
  | 'exitTimeoutSecs'
  | 'responseCacheBytes'
  | 'redisCache'
>;

/** The rows: metadata as the transports advertise it (`--id` included), the rest from the flags. */
export function serverOptionRows(options: TableOptions, metadata: ServerMetadata): string[][] {
  const flag = (on: boolean): string => (on ? '1' : '0');
  return [
    ['server_id', metadata.name],
    ['server_version', metadata.version],
    ['server_extensions', metadata.extensions.join(' ')],
    ...options.modelRepositories.map((dir, i) => [`model_repository_path[${i}]`, dir]),
    ['model_control_mode', CONTROL_MODE[options.modelControlMode]],
    ...options.loadModels.map((name, i) => [`startup_models_${i}`, name]),
    // Triton's strict_model_config is "auto-complete off", which both flags ask for.
    ['strict_model_config', flag(options.strictModelConfig || options.disableAutoCompleteConfig)],
    ['model_config_name', options.modelConfigName ?? ''],
    ['rate_limit', options.rateLimit === 'execution_count' ? 'EXEC_COUNT' : 'OFF'],
    // Triton's ResourceString, spacing included; a global resource is device -1.
    ...options.rateLimitResources.map((r, i) => [`rate_limit_resource[${i}]`, `{"name":"${r.name}", "count":${r.count} "device":${r.device ?? -1}}`]),
    ['strict_readiness', flag(options.strictReadiness)],
    ['exit_timeout', String(options.exitTimeoutSecs)],
    ['cache_enabled', flag(options.responseCacheBytes !== undefined || options.redisCache !== undefined)],
  ];
}

/** The table as logged (leading newline, as Triton's follows the log line's prefix). */
export function serverOptionsTable(options: TableOptions, metadata: ServerMetadata): string {
  return formatTable(['Option', 'Value'], serverOptionRows(options, metadata));
}
