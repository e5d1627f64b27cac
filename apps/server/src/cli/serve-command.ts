/**
 * `tritium serve`: tritonserver's flags, the python-like and ONNX backends, HTTP + gRPC +
 * metrics. Logs in Triton's format; SIGTERM/SIGINT stop gracefully within --exit-timeout-secs.
 */
import { exampleBackends } from '@tritium/backend-examples';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import type { Backend } from '@tritium/core/backend';
import { createContainer } from '../container.ts';
import { TOKENS } from '../tokens.ts';
import type { TritiumServer } from '../tritium-server.ts';
import type { TritonLog } from '../logging/triton-log.ts';
import { runServer } from './run-server.ts';
import { FlagError, parseServeFlags } from './flags.ts';
import { type ServeOptions } from './serve-options.ts';
import { SERVE_USAGE } from './serve-usage.ts';
import { optionalOnnxBackend, optionalTensorrtBackend } from '../optional/optional-backends.ts';

/**
 * The backends `tritium serve` binds by default: model.ts (python-like), ONNX Runtime and TensorRT,
 * and Triton's example backends (identity, repeat, square). ONNX Runtime and TensorRT come from
 * optional packages, loaded when a model needs them (optional/optional-backends.ts).
 */
export function defaultBackends(
  options: Partial<Pick<ServeOptions, 'modelTypeCheck' | 'modelInstallDependencies'>> & { inspect?: readonly string[]; dev?: boolean } = {},
): Backend[] {
  const python = pythonLikeBackend({
    typeCheck: options.modelTypeCheck ?? 'error',
    ...(options.modelInstallDependencies ? { installDependencies: true } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    // tritium dev checks on every save: its type checker stays warm.
    ...(options.dev ? { typeCheckIdleMs: Infinity } : {}),
  });
  return [python, optionalOnnxBackend(), optionalTensorrtBackend(), ...exampleBackends()];
}

export async function serveCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  let options: ServeOptions;
  try {
    options = parseServeFlags(args);
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`tritium serve: ${e.message}\n${SERVE_USAGE}`);
      return 2;
    }
    throw e;
  }
  const container = createContainer({ options, backends: defaultBackends(options) });
  const log = container.get<TritonLog>(TOKENS.Log);
  if (options.strictModelConfig) {
    log.warn('--strict-model-config is deprecated, use --disable-auto-complete-config instead');
  }
  return runServer(container.get<TritiumServer>(TOKENS.TritiumServer), options);
}
