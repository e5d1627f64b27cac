/**
 * Tritium's gauges of what the transports hold (beyond Triton), so an operator sees how close the
 * server runs to its bounds: request bytes held against `--max-buffered-request-size`.
 */
import type { CustomFamilySnapshot } from '@tritium/core';
import type { RequestBudget } from '../protocol/request-budget.ts';

export function transportGauges(budget: RequestBudget): () => CustomFamilySnapshot[] {
  return () => [
    {
      name: 'tritium_request_bytes_held',
      description: 'Bytes of request bodies and messages held in memory now, HTTP and gRPC together (bounded by --max-buffered-request-size)',
      kind: 'GAUGE',
      metrics: [{ labels: {}, value: budget.inUse }],
    },
  ];
}
