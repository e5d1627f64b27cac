/**
 * One sampled request's trace and the traces spawned from it (ensemble steps, BLS calls), as core's
 * RequestTrace SPI sees them, plus the frontend's timestamps (HTTP_RECV_START, GRPC_SEND_END, ...).
 * The tree is finished when the frontend is done with it and core released every trace in it (as
 * Triton's Trace object lives until TraceRelease of its last spawned trace): then its exporter
 * writes it (Triton's JSON, or OpenTelemetry spans).
 */
import type { Tensor } from '@tritium/core';
import type { RequestTrace, TraceActivity, TraceTensorActivity } from '@tritium/core/trace';

/** Triton's trace ids: one counter for the process, from 1 (InferenceTrace::next_id_). */
let nextTraceId = 1;

export interface TraceNode {
  readonly id: number;
  readonly parentId: number;
  model?: string;
  version?: number;
  requestId?: string;
}

/** What a tree reports to: the Triton JSON writer or the OpenTelemetry exporter. */
export interface TraceExporter {
  setModel(node: TraceNode): void;
  activity(node: TraceNode, activity: TraceActivity | string, ns: number): void;
  tensor(node: TraceNode, activity: TraceTensorActivity, tensor: Tensor): void;
  link(node: TraceNode, others: readonly TraceNode[]): void;
  /** Every trace of the tree is released and the frontend is done. */
  finish(): void;
}

const NODE = Symbol('tritium.traceNode');
type NodeTrace = RequestTrace & { readonly [NODE]: TraceNode };

/** A sampled request's trace tree; `root` goes on the InferRequest. */
export class TraceTree {
  private open = 1; // the frontend's hold
  private finished = false;
  readonly root: RequestTrace;
  readonly rootNode: TraceNode;

  constructor(
    private readonly exporter: TraceExporter,
    readonly tensors: boolean,
  ) {
    this.root = this.node(0);
    this.rootNode = (this.root as NodeTrace)[NODE];
  }

  /** A frontend timestamp (HTTP_RECV_START, ...) on the root trace, as Triton's Trace::CaptureTimestamp. */
  capture(name: string, ns: number): void {
    if (!this.finished) this.exporter.activity(this.rootNode, name, ns);
  }

  /** The frontend is done (the response is sent or the request failed before core saw it). */
  done(): void {
    this.release();
  }

  private release(): void {
    if (--this.open === 0 && !this.finished) {
      this.finished = true;
      this.exporter.finish();
    }
  }

  private node(parentId: number): RequestTrace {
    const node: TraceNode = { id: nextTraceId++, parentId };
    this.open++;
    let released = false;
    const exporter = this.exporter;
    const trace: NodeTrace = {
      [NODE]: node,
      setModel: (model, version, requestId) => {
        node.model = model;
        node.version = version;
        node.requestId = requestId;
        exporter.setModel(node);
      },
      report: (activity, ns) => exporter.activity(node, activity, ns),
      tensors: this.tensors,
      reportTensor: (activity, tensor) => exporter.tensor(node, activity, tensor),
      spawnChild: () => this.node(node.id),
      linkBatch: (batch) => {
        const others = batch.flatMap((t) => {
          const n = (t as Partial<NodeTrace>)[NODE];
          return n && n !== node ? [n] : [];
        });
        if (others.length > 0) exporter.link(node, others);
      },
      release: () => {
        if (released) return;
        released = true;
        this.release();
      },
    };
    return trace;
  }
}
