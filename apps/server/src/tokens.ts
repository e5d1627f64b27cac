/** Service identifiers of the composition root (inversify). Only apps/server uses them. */
export const TOKENS = {
  /** Every Backend (multi-injected): bind more to add backends. */
  Backend: Symbol.for('tritium.Backend'),
  ServeOptions: Symbol.for('tritium.ServeOptions'),
  Log: Symbol.for('tritium.Log'),
  InferenceServer: Symbol.for('tritium.InferenceServer'),
  TransportContext: Symbol.for('tritium.TransportContext'),
  HttpTransport: Symbol.for('tritium.HttpTransport'),
  /** The OpenAI routes' own listener (`--openai-port`): an HTTP transport that serves them only. */
  OpenAiTransport: Symbol.for('tritium.OpenAiTransport'),
  GrpcTransport: Symbol.for('tritium.GrpcTransport'),
  MetricsTransport: Symbol.for('tritium.MetricsTransport'),
  /** The connection caps fitted below the descriptor limit (protocol/connection-plan.ts). */
  ConnectionPlan: Symbol.for('tritium.ConnectionPlan'),
  TritiumServer: Symbol.for('tritium.TritiumServer'),
  /** `--cache-config redis,...`: the store the server opens before loading models (bound only then). */
  ResponseCache: Symbol.for('tritium.ResponseCache'),
} as const;
