/**
 * The platform team's server: Tritium's container with the stock backends plus `reverse`,
 * bound under TOKENS.Backend (multi-injected), served over HTTP, gRPC and metrics.
 */
// @tritium/server is an app that also exports its composition root for embedding; Nx forbids
// importing apps by default, and embedding it is exactly what this example shows.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createContainer, defaultBackends, TOKENS, type ServeOptions, type TritiumServer } from '@tritium/server';
import type { Backend } from '@tritium/core/backend';
import { reverseBackend } from './reverse-backend.ts';

export function buildServer(options: ServeOptions, extra: { stockBackends?: boolean } = {}): TritiumServer {
  const container = createContainer({ options, backends: extra.stockBackends === false ? [] : defaultBackends() });
  container.bind<Backend>(TOKENS.Backend).toConstantValue(reverseBackend());
  return container.get<TritiumServer>(TOKENS.TritiumServer);
}
