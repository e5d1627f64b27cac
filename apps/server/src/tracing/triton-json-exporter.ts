/**
 * Writes a trace tree in Triton's JSON trace format (server: tracer.cc TraceActivity /
 * TraceTensorActivity): per trace id, `{"id":N,"model_name":"m","model_version":V[,"request_id":"r"]
 * [,"parent_id":P]}` at REQUEST_START, then one `{"id":N,"timestamps":[{"name":"X","ns":T}]}` per
 * activity in the order they happened, and with the TENSORS level `{"id":N,"activity":
 * "TENSOR_QUEUE_INPUT","tensor":{"name","data","shape","dtype"}}`. Trace ids are grouped, the
 * request's own first, then the traces it spawned. Unlike Triton, strings are JSON-escaped.
 */
import type { Tensor } from '@tritium/core';
import type { TraceTensorActivity } from '@tritium/core/trace';
import type { TraceExporter, TraceNode } from './trace-tree.ts';

/** Elements of one tensor written into a trace at most (the rest is cut with `...`). */
export const MAX_TRACE_TENSOR_ELEMENTS = 4096;

export class TritonJsonExporter implements TraceExporter {
  private readonly streams = new Map<number, string[]>();

  /** `timestamps`: the level includes TIMESTAMPS (a TENSORS-only trace writes no timestamps, as Triton). */
  constructor(
    private readonly write: (entries: string) => void,
    private readonly timestamps = true,
  ) {}

  private stream(node: TraceNode): string[] {
    let s = this.streams.get(node.id);
    if (!s) {
      s = [];
      this.streams.set(node.id, s);
    }
    return s;
  }

  setModel(node: TraceNode): void {
    let head = `{"id":${node.id},"model_name":${JSON.stringify(node.model ?? '')},"model_version":${node.version ?? -1}`;
    if (node.requestId) head += `,"request_id":${JSON.stringify(node.requestId)}`;
    if (node.parentId !== 0) head += `,"parent_id":${node.parentId}`;
    this.stream(node).push(head + '}');
  }

  activity(node: TraceNode, activity: string, ns: number): void {
    if (!this.timestamps) return;
    this.stream(node).push(`{"id":${node.id},"timestamps":[{"name":${JSON.stringify(activity)},"ns":${Math.round(ns)}}]}`);
  }

  tensor(node: TraceNode, activity: TraceTensorActivity, tensor: Tensor): void {
    const entry = {
      id: node.id,
      activity,
      tensor: { name: tensor.name, data: tensorText(tensor), shape: tensor.shape.join(','), dtype: tensor.datatype },
    };
    this.stream(node).push(JSON.stringify(entry));
  }

  link(): void {
    // Triton's format has no links: each carried request's trace holds its steps as its own children.
  }

  finish(): void {
    const parts: string[] = [];
    for (const entries of this.streams.values()) if (entries.length > 0) parts.push(entries.join(','));
    if (parts.length > 0) this.write(parts.join(','));
  }
}

/** Triton's tensor "data": elements comma-separated; BYTES elements quoted; FP16/BF16 left empty as Triton does. */
export function tensorText(tensor: Tensor): string {
  const { data, datatype } = tensor;
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  const n = Math.min(count, MAX_TRACE_TENSOR_ELEMENTS);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: string[] = [];
  const read: Record<string, [number, (o: number) => number | bigint | boolean]> = {
    BOOL: [1, (o) => view.getUint8(o) !== 0],
    UINT8: [1, (o) => view.getUint8(o)],
    UINT16: [2, (o) => view.getUint16(o, true)],
    UINT32: [4, (o) => view.getUint32(o, true)],
    UINT64: [8, (o) => view.getBigUint64(o, true)],
    INT8: [1, (o) => view.getInt8(o)],
    INT16: [2, (o) => view.getInt16(o, true)],
    INT32: [4, (o) => view.getInt32(o, true)],
    INT64: [8, (o) => view.getBigInt64(o, true)],
    FP32: [4, (o) => view.getFloat32(o, true)],
    FP64: [8, (o) => view.getFloat64(o, true)],
  };
  if (datatype === 'BYTES') {
    let offset = 0;
    const decoder = new TextDecoder('utf-8', { fatal: false });
    for (let e = 0; e < n && offset + 4 <= data.byteLength; e++) {
      const len = view.getUint32(offset, true);
      offset += 4;
      if (offset + len > data.byteLength) break;
      out.push(`"${decoder.decode(data.subarray(offset, offset + len))}"`);
      offset += len;
    }
  } else {
    const reader = read[datatype];
    if (!reader) return '';
    const [size, get] = reader;
    for (let e = 0; e < n && (e + 1) * size <= data.byteLength; e++) out.push(String(get(e * size)));
  }
  return out.join(',') + (count > n ? ',...' : '');
}
