/**
 * The extensions server metadata advertises: core's list (Triton's, less what core cannot serve)
 * less what these transports cannot serve on this server. An advertised extension works; delete a
 * line below once the transports serve it.
 */
import type { ServerMetadata } from '@tritium/core';
import type { TransportContext } from './context.ts';
import { CUDA_SHM_UNSUPPORTED_MESSAGE, SHM_DISABLED_MESSAGE } from './shared-memory.ts';

/** Extensions these transports cannot serve, with why (system shared memory only while disabled). */
export function transportExtensionGaps(ctx: Pick<TransportContext, 'shm'>): ReadonlyMap<string, string> {
  const gaps = new Map<string, string>([
    ['cuda_shared_memory', CUDA_SHM_UNSUPPORTED_MESSAGE],
  ]);
  if (!ctx.shm.allowed) gaps.set('system_shared_memory', SHM_DISABLED_MESSAGE);
  return gaps;
}

/** Server metadata as HTTP `GET /v2` and gRPC `ServerMetadata` answer it. */
export function advertisedServerMetadata(ctx: Pick<TransportContext, 'api' | 'shm' | 'serverId'>): ServerMetadata {
  const metadata = ctx.api.serverMetadata();
  const gaps = transportExtensionGaps(ctx);
  return { ...metadata, name: ctx.serverId ?? metadata.name, extensions: metadata.extensions.filter((e) => !gaps.has(e)) };
}
