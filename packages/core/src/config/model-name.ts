/** Triton's rule that a model's `name` equals its folder's name (model_repository_manager.cc). */
import { ConfigValidationError } from './validation-error.ts';
import type { ModelConfig } from './model-config.ts';

/**
 * @throws ConfigValidationError INVALID_ARG `unexpected directory name 'D' for model 'N', directory name must
 * equal model name` when a normalized config's name differs from its folder name.
 */
export function checkModelNameMatchesDirectory(config: ModelConfig, directoryName: string): void {
  if (config.name !== directoryName) {
    throw new ConfigValidationError(
      `unexpected directory name '${directoryName}' for model '${config.name}', directory name must equal model name`,
      'name',
    );
  }
}
