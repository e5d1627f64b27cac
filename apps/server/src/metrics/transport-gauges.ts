/**
 * Tritium's gauges of what the transports hold (beyond Triton), so an operator sees how close the
 * server runs to its bounds: request bytes held against `--max-buffered-request-size`, connections
 * against `--http-max-connections` and `--grpc-max-connections`.
 */
import type { CustomFamilySnapshot } from '@tritium/core/metrics';
import type { RequestBudget } from '../protocol/request-budget.ts';

export interface OpenConnections {
  readonly http: number;
  readonly grpc: number;
}

export function transportGauges(budget: RequestBudget, connections: () => OpenConnections): () => CustomFamilySnapshot[] {
  return () => [
    {
      name: 'tritium_open_connections',
      description: 'Client connections open now, by listener (bounded by --http-max-connections and --grpc-max-connections)',
      kind: 'GAUGE',
      metrics: Object.entries(connections()).map(([listener, value]) => ({ labels: { listener }, value })),
    },
    {
      name: 'tritium_request_bytes_held',
      description: 'Bytes of request bodies and messages held in memory now, HTTP and gRPC together (bounded by --max-buffered-request-size)',
      kind: 'GAUGE',
      metrics: [{ labels: {}, value: budget.inUse }],
    },
  ];
}
