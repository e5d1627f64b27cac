/** `@tritium/core/trace`: the tracer SPI (request-trace.ts) and its helpers. */
export type { RequestTrace, TraceActivity, TraceTensorActivity } from './request-trace.ts';
export { traceNowNs, compositeTrace, reportCompute } from './request-trace.ts';
