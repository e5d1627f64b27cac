/**
 * @tritium/server — build your own Tritium server: the composition root (inversify container),
 * its tokens, the running server and the `tritium serve` flag parser.
 */
export { createContainer, defaultInferenceServer } from './container.ts';
export type { CreateContainerOptions, InferenceServerFactory } from './container.ts';
export { TOKENS } from './tokens.ts';
export { TritiumServer } from './tritium-server.ts';
export type { BoundPorts } from './tritium-server.ts';
export { parseServeFlags, FlagError } from './cli/flags.ts';
export { defaultServeOptions } from './cli/serve-options.ts';
export type { ServeOptions, ModelControlMode } from './cli/serve-options.ts';
export { defaultBackends } from './cli/serve-command.ts';
export { runServer } from './cli/run-server.ts';
export { ListenError } from './listeners.ts';
export { TritonLog, formatLogLine } from './logging/triton-log.ts';
export type { TritonLogOptions } from './logging/triton-log.ts';
