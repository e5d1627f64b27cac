import type { ModelConfig } from '@tritium/core';

/** Plain data each instance worker receives (structured-cloneable; no server objects). */
export interface PythonLikeInit {
  /** file:// URL of the transpiled model bundle. */
  readonly bundleUrl: string;
  /** The original model file, for error locations. */
  readonly modelFile: string;
  readonly modelName: string;
  readonly version: number;
  /** The model's folder (Triton's `model_repository` arg). */
  readonly modelDir: string;
  readonly config: ModelConfig;
  /** `config` as Triton's JSON text. */
  readonly configJson: string;
  readonly instance: { readonly name: string; readonly kind: string; readonly device: number };
  /** Open Node's inspector in this worker (`tritium dev --inspect`): 127.0.0.1, a free port, its URL logged. */
  readonly inspect?: boolean;
}
